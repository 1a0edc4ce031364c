/// One request on the control socket: a JSON object on one line.
public struct ControlRequest: Codable, Hashable, Sendable {
    /// What to do: status, peers, increment, counter, watch, bubbles, pickup, move, drop, invitations, accept,
    /// decline, bench.
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
    /// bench: the peer, by peer id (16 hex digits) or name.
    public var peer: String?
    /// bench: the transport ("lan").
    public var transport: String?
    /// bench: "reliable" or "unreliable".
    public var channel: String?
    /// bench: message size in bytes.
    public var size: Int?

    /// Creates a request.
    public init(
        command: String, count: Int? = nil, view: Int? = nil, x: Double? = nil, y: Double? = nil, id: UInt64? = nil,
        reason: String? = nil, peer: String? = nil, transport: String? = nil, channel: String? = nil, size: Int? = nil
    ) {
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
