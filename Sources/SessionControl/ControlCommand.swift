import Foundation

/// One request on the control socket, typed: a case per command with its arguments (docs/control-protocol.md).
///
/// On the socket it is one JSON object on one line, `"command"` naming it beside its arguments' members
/// (`{"command": "move", "view": 1, "x": 120, "y": 80}`). A line whose members are not of their types is no request at
/// all (`DecodingError`: the daemon closes the connection); a request with an unknown command, a missing argument or a
/// bad one is a ``ControlError`` with the reply's message (the daemon answers it and the connection stays open).
public enum ControlCommand: Hashable, Sendable {
    /// Who this daemon is: ``StatusResult``.
    case status
    /// Every peer: `[PeerResult]`.
    case peers
    /// Presses the counter `count` times (at least 1): ``IncrementResult``.
    case increment(count: Int = 1)
    /// Every count: ``CounterResult``.
    case counter
    /// Makes the connection a watcher: ``WatchResult``, then events until the client closes. With `since`, the events
    /// after that number (of the run `run`, when given) come first, from the daemon's history, exactly once.
    case watch(since: UInt64? = nil, run: String? = nil)
    /// Every bubble: `[BubbleResult]`.
    case bubbles
    /// Asks the coordinator for a bubble (`pickup` on the socket).
    case pickUp(view: Int)
    /// Moves a bubble this peer holds.
    case move(view: Int, x: Double, y: Double)
    /// Lets a bubble go, at the given position or at its current one.
    case drop(view: Int, x: Double? = nil, y: Double? = nil)
    /// The invitations waiting for an answer: `[InvitationResult]`.
    case invitations
    /// Accepts an invitation: ``AnswerResult``.
    case accept(id: UInt64)
    /// Declines an invitation; the reason stays in the daemon's log: ``AnswerResult``.
    case decline(id: UInt64, reason: String? = nil)
    /// Measures round trips to a peer: ``BenchResult``.
    case bench(Bench)
    /// An application message to a peer (by peer id or name), or to every member without one: ``SendResult``.
    case send(data: Data, peer: String? = nil, channel: ControlChannel = .reliable)
    /// Sends the file at an absolute path to a peer as a resource: ``TransferResult`` lines, the last one final.
    case push(path: String, peer: String, name: String? = nil)
    /// Sends the file at an absolute path to a peer as a byte stream: ``StreamResult``.
    case stream(path: String, peer: String, name: String? = nil)
    /// Makes the connection a listener of byte streams: `{}`, then ``StreamResult`` lines until the client closes.
    case streams
    /// The transfers under way: `[TransferResult]`.
    case transfers
    /// Cancels a transfer, as `transfers` lists it ("out:PEER/N" or "in:PEER/N").
    case cancel(transfer: String, reason: String? = nil)
    /// Asks a device (its peer id) to pair, or confirms the pairing with the code both devices show: ``PairResult``.
    case pair(peer: UInt64, code: String? = nil)
    /// The pairings under way: `[PairingResult]`.
    case pairings
    /// The trusted devices: `[DeviceResult]`.
    case devices
    /// Removes a device (its peer id) from the session, or rejects a pairing with it.
    case unpair(peer: UInt64)
    /// Where the page is: ``WebResult``.
    case web

    /// `bench`'s arguments.
    public struct Bench: Hashable, Sendable {
        /// The peer, by peer id (16 hex digits) or name.
        public var peer: String
        /// The transport's name; nil: the LAN's.
        public var transport: String?
        public var channel: ControlChannel
        /// How many round trips, 1...1,000,000.
        public var count: Int
        /// The ping frame's size in bytes; nil: the smallest.
        public var size: Int?

        public init(
            peer: String, transport: String? = nil, channel: ControlChannel = .reliable, count: Int = 1000,
            size: Int? = nil
        ) {
            self.peer = peer
            self.transport = transport
            self.channel = channel
            self.count = count
            self.size = size
        }
    }

    /// The command's name on the socket.
    public var name: String {
        switch self {
        case .status: "status"
        case .peers: "peers"
        case .increment: "increment"
        case .counter: "counter"
        case .watch: "watch"
        case .bubbles: "bubbles"
        case .pickUp: "pickup"
        case .move: "move"
        case .drop: "drop"
        case .invitations: "invitations"
        case .accept: "accept"
        case .decline: "decline"
        case .bench: "bench"
        case .send: "send"
        case .push: "push"
        case .stream: "stream"
        case .streams: "streams"
        case .transfers: "transfers"
        case .cancel: "cancel"
        case .pair: "pair"
        case .pairings: "pairings"
        case .devices: "devices"
        case .unpair: "unpair"
        case .web: "web"
        }
    }
}

/// The channel of `send` and `bench`.
public enum ControlChannel: String, Codable, Hashable, Sendable {
    case reliable
    case unreliable
    /// Reliable, and on the sender's disk before `send` is answered (`send` only).
    case durable
}

/// A request the daemon refuses before carrying it out, or a command that failed: the message of its error reply.
public struct ControlError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

extension ControlCommand: Codable {
    /// Reads a request line: a `DecodingError` when it is no request, a ``ControlError`` when it is a bad one.
    public init(from decoder: any Decoder) throws {
        self = try ControlCommand(ControlRequestLine(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try line.encode(to: encoder)
    }
}
