/// One request on the control socket: a JSON object on one line.
public struct ControlRequest: Codable, Hashable, Sendable {
    /// What to do: status, peers, increment, counter, watch, bubbles, pickup, move, drop, invitations, accept,
    /// decline, bench, send, push, stream, streams, transfers, cancel, pair, pairings, devices, unpair.
    public var command: String
    /// increment: how many presses (default 1); bench: how many round trips.
    public var count: Int?
    /// pickup, move, drop: the bubble.
    public var view: Int?
    /// move, drop: the position.
    public var x: Double?
    /// move, drop: the position.
    public var y: Double?
    /// accept, decline: the invitation's number.
    public var id: UInt64?
    /// decline: why, in words.
    public var reason: String?
    /// bench, send, push, stream: the peer, by peer id (16 hex digits) or name; send without one goes to every member.
    /// pair, unpair: the device, by peer id.
    public var peer: String?
    /// bench: the transport ("lan").
    public var transport: String?
    /// bench, send: "reliable" or "unreliable".
    public var channel: String?
    /// bench: message size in bytes.
    public var size: Int?
    /// send: the message, in base64.
    public var data: String?
    /// push, stream: the file's absolute path, as the daemon reads it.
    public var path: String?
    /// push: the name the receiver stores it under; stream: the stream's name (default: the file's name).
    public var name: String?
    /// cancel: the transfer, as `transfers` lists it ("out:PEER/N" or "in:PEER/N").
    public var transfer: String?
    /// pair: confirms the pairing with this code (the one both devices show).
    public var code: String?

    /// Creates a request.
    public init(
        command: String, count: Int? = nil, view: Int? = nil, x: Double? = nil, y: Double? = nil, id: UInt64? = nil,
        reason: String? = nil, peer: String? = nil, transport: String? = nil, channel: String? = nil, size: Int? = nil,
        data: String? = nil, path: String? = nil, name: String? = nil, transfer: String? = nil, code: String? = nil
    ) {
        self.code = code
        self.data = data
        self.path = path
        self.name = name
        self.transfer = transfer
        self.command = command
        self.count = count
        self.view = view
        self.x = x
        self.y = y
        self.id = id
        self.reason = reason
        self.peer = peer
        self.transport = transport
        self.channel = channel
        self.size = size
    }
}
