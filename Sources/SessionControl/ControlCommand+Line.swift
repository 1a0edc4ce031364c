import Foundation

/// A command to and from its request line: the checks of its arguments, with the messages of their error replies.
extension ControlCommand {
    /// The command a request line asks for; throws the error reply's message when its command is unknown or an
    /// argument is missing or bad.
    package init(_ line: ControlRequestLine) throws(ControlError) {
        switch line.command {
        case "status": self = .status
        case "peers": self = .peers
        case "counter": self = .counter
        case "watch":
            guard line.run == nil || line.since != nil else { throw ControlError("run goes with since") }
            self = .watch(since: line.since, run: line.run)
        case "bubbles": self = .bubbles
        case "invitations": self = .invitations
        case "streams": self = .streams
        case "transfers": self = .transfers
        case "pairings": self = .pairings
        case "devices": self = .devices
        case "web": self = .web
        case "increment":
            let count = line.count ?? 1
            guard count >= 1 else { throw ControlError("count must be at least 1") }
            self = .increment(count: count)
        case "pickup": self = .pickUp(view: try Self.view(line))
        case "move":
            guard let x = line.x, let y = line.y else { throw ControlError("move needs x and y") }
            self = .move(view: try Self.view(line), x: x, y: y)
        case "drop": self = .drop(view: try Self.view(line), x: line.x, y: line.y)
        case "accept", "decline":
            guard let id = line.id else { throw ControlError("\(line.command) needs an invitation id") }
            self = line.command == "accept" ? .accept(id: id) : .decline(id: id, reason: line.reason)
        case "bench": self = .bench(try Self.bench(line))
        case "send":
            guard let encoded = line.data, let data = Data(base64Encoded: encoded) else {
                throw ControlError("send needs data (base64)")
            }
            self = .send(data: data, peer: line.peer, channel: try Self.channel(line))
        case "push", "stream":
            guard let path = line.path, path.hasPrefix("/"), let peer = line.peer else {
                throw ControlError("\(line.command) needs an absolute path and a peer")
            }
            self =
                line.command == "push"
                ? .push(path: path, peer: peer, name: line.name) : .stream(path: path, peer: peer, name: line.name)
        case "cancel":
            guard let transfer = line.transfer else { throw ControlError("cancel needs a transfer id") }
            self = .cancel(transfer: transfer, reason: line.reason)
        case "pair": self = .pair(peer: try Self.peerID(line), code: line.code)
        case "unpair": self = .unpair(peer: try Self.peerID(line))
        default: throw ControlError("unknown command \"\(line.command)\"")
        }
    }

    /// The request line of the command.
    package var line: ControlRequestLine {
        var line = ControlRequestLine(command: name)
        switch self {
        case .status, .peers, .counter, .bubbles, .invitations, .streams, .transfers, .pairings, .devices,
            .web:
            break
        case .watch(let since, let run): (line.since, line.run) = (since, run)
        case .increment(let count): line.count = count
        case .pickUp(let view): line.view = view
        case .move(let view, let x, let y):
            line.view = view
            line.x = x
            line.y = y
        case .drop(let view, let x, let y):
            line.view = view
            line.x = x
            line.y = y
        case .accept(let id): line.id = id
        case .decline(let id, let reason): (line.id, line.reason) = (id, reason)
        case .bench(let bench):
            line.peer = bench.peer
            line.transport = bench.transport
            line.channel = bench.channel.rawValue
            line.count = bench.count
            line.size = bench.size
        case .send(let data, let peer, let channel):
            (line.data, line.peer, line.channel) = (data.base64EncodedString(), peer, channel.rawValue)
        case .push(let path, let peer, let name), .stream(let path, let peer, let name):
            (line.path, line.peer, line.name) = (path, peer, name)
        case .cancel(let transfer, let reason): (line.transfer, line.reason) = (transfer, reason)
        case .pair(let peer, let code): (line.peer, line.code) = (Self.hex(peer), code)
        case .unpair(let peer): line.peer = Self.hex(peer)
        }
        return line
    }

    /// A peer id as the socket writes it: 16 hex digits.
    public static func hex(_ peerID: UInt64) -> String {
        let digits = String(peerID, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// A peer id read from its 16 hex digits (either case); nil for anything else.
    public static func peerID(hex text: String) -> UInt64? {
        guard text.utf8.count == 16, text.utf8.allSatisfy({ $0 < 0x80 && Character(Unicode.Scalar($0)).isHexDigit })
        else { return nil }
        return UInt64(text, radix: 16)
    }

    private static func view(_ line: ControlRequestLine) throws(ControlError) -> Int {
        guard let view = line.view else { throw ControlError("no bubble given; bubbles are 0, 1, 2") }
        return view
    }

    private static func channel(_ line: ControlRequestLine) throws(ControlError) -> ControlChannel {
        guard let channel = ControlChannel(rawValue: line.channel ?? "reliable") else {
            throw ControlError("channel must be reliable, unreliable or durable")
        }
        return channel
    }

    private static func peerID(_ line: ControlRequestLine) throws(ControlError) -> UInt64 {
        guard let text = line.peer, let peer = peerID(hex: text) else {
            throw ControlError("\(line.command) needs a peer id (16 hex digits), got \(line.peer ?? "none")")
        }
        return peer
    }

    private static func bench(_ line: ControlRequestLine) throws(ControlError) -> Bench {
        guard let peer = line.peer else { throw ControlError("bench needs a peer (peer id or name)") }
        let channel = try channel(line)
        guard channel != .durable else { throw ControlError("bench measures the reliable or the unreliable channel") }
        let count = line.count ?? 1000
        guard (1...1_000_000).contains(count) else { throw ControlError("count must be 1...1000000") }
        return Bench(peer: peer, transport: line.transport, channel: channel, count: count, size: line.size)
    }
}
