/// One request line of the control socket as it is written: a JSON object with the command's name and the members of
/// every command, each optional. Only the socket's edges see it: ``ControlCommand`` is the request, typed, that it is
/// read into (``ControlCommand/init(_:)``) and written from (``ControlCommand/line``).
package struct ControlRequestLine: Codable, Hashable, Sendable {
    /// What to do: status, peers, increment, counter, watch, bubbles, pickup, move, drop, invitations, accept,
    /// decline, bench, send, push, stream, streams, transfers, cancel, pair, pairings, devices, unpair, web.
    package var command: String
    /// increment: how many presses (default 1); bench: how many round trips.
    package var count: Int?
    /// pickup, move, drop: the bubble.
    package var view: Int?
    /// move, drop: the position.
    package var x: Double?
    /// move, drop: the position.
    package var y: Double?
    /// accept, decline: the invitation's number.
    package var id: UInt64?
    /// decline: why, in words.
    package var reason: String?
    /// bench, send, push, stream: the peer, by peer id (16 hex digits) or name; send without one goes to every member.
    /// pair, unpair: the device, by peer id.
    package var peer: String?
    /// bench: the transport ("lan").
    package var transport: String?
    /// bench, send: "reliable" or "unreliable".
    package var channel: String?
    /// bench: message size in bytes.
    package var size: Int?
    /// send: the message, in base64.
    package var data: String?
    /// push, stream: the file's absolute path, as the daemon reads it.
    package var path: String?
    /// push: the name the receiver stores it under; stream: the stream's name (default: the file's name).
    package var name: String?
    /// cancel: the transfer, as `transfers` lists it ("out:PEER/N" or "in:PEER/N").
    package var transfer: String?
    /// pair: confirms the pairing with this code (the one both devices show).
    package var code: String?
    /// watch: replay the events after this number first.
    package var since: UInt64?
    /// watch: the run (of the daemon) that `since` is a number of.
    package var run: String?

    /// Creates a line.
    package init(
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
