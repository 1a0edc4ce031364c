import NIOCore

/// Where a peer can be reached: a transport's name and an address in its terms.
public struct Endpoint: Hashable, Sendable, CustomStringConvertible {
    /// The transport, e.g. "lan".
    public var transport: String
    /// Host name or address.
    public var host: String
    /// Port (or channel, for transports that have channels).
    public var port: Int

    /// Creates an endpoint.
    public init(transport: String = LANTransport.name, host: String, port: Int) {
        self.transport = transport
        self.host = host
        self.port = port
    }

    /// Parses "HOST:PORT" (IPv6 as "[ADDRESS]:PORT") for the LAN transport.
    public init?(parsing text: String) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { return nil }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (1...65_535).contains(port) else { return nil }
        self.init(host: String(host), port: port)
    }

    /// "HOST:PORT" ("[ADDRESS]:PORT" for IPv6) on the LAN; "ADDRESS/CHANNEL" on a transport of its own addressing
    /// (a Bluetooth device address and channel).
    public var description: String {
        guard transport == LANTransport.name else { return "\(host)/\(port)" }
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

/// A way of reaching peers. Each transport gives byte-stream channels for the reliable link, and may give a
/// datagram channel for the unreliable one; everything above (handshake, sequencing, liveness, paths and failover) is
/// shared. A session runs several transports side by side; a peer reached through more than one gets a link on each,
/// one active and the others standing by.
///
/// A new transport (for example Bluetooth RFCOMM) is one new type conforming to this protocol; an endpoint names the
/// transport it is dialled through.
public protocol Transport: Sendable {
    /// Its name in endpoints and peer listings, e.g. "lan".
    var name: String { get }
    /// Whether it carries unreliable datagrams.
    var carriesDatagrams: Bool { get }

    /// Listens for incoming links; `initializer` sets up each accepted channel. Returns the listening channel and
    /// the port it got. `host` and `port` are the session's (the LAN transport's); a transport with its own
    /// addressing (a Bluetooth adapter and channel) takes them from its own configuration instead.
    func listen(
        host: String, port: Int, on loop: any EventLoop,
        initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<(channel: any Channel, port: Int)>

    /// Connects to `endpoint`; `initializer` sets up the channel before it becomes active.
    func connect(
        to endpoint: Endpoint, on loop: any EventLoop,
        initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<any Channel>

    /// Opens the datagram channel on `port`, when ``carriesDatagrams``.
    func openDatagrams(
        host: String, port: Int, on loop: any EventLoop,
        initializer: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<any Channel>

    /// The remote address a connected channel leads to (an IP address, a device address), which tells one path to
    /// a peer from another; nil when the channel has none.
    func pathAddress(of channel: any Channel) -> String?

    /// Where peers reach this transport's listener (which listens on `port`); nil when that is not known.
    func localEndpoint(of listener: any Channel, port: Int) -> Endpoint?
}

extension Transport {
    /// The remote IP address, for transports on IP.
    public func pathAddress(of channel: any Channel) -> String? {
        channel.remoteAddress?.ipAddress
    }

    /// The listener's local IP address and port, for transports on IP (`0.0.0.0` when it listens on every
    /// interface).
    public func localEndpoint(of listener: any Channel, port: Int) -> Endpoint? {
        listener.localAddress.map { Endpoint(transport: name, host: $0.ipAddress ?? "?", port: $0.port ?? port) }
    }
}
