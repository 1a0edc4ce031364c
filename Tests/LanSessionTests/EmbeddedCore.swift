import Logging
import NIOCore
import NIOEmbedded
import TestSupport
import WireCodec

@_spi(Diagnostics) @testable import LanSession

/// A session core on an `EmbeddedEventLoop`, running without listeners: its links are `EmbeddedChannel`s set up as
/// its listener would set up accepted connections, so that a test feeds frames in and reads frames out, with no
/// sockets and no sleeps. A ``MessageRecorder`` takes the counter's increments, as an application would.
struct EmbeddedCore {
    let core: SessionCore
    /// The core's components, as ``Session`` holds them.
    let components: SessionComponents
    let configuration: SessionConfiguration
    /// Where the core's events go.
    let fanout = EventFanout<SessionEvent>(missed: SessionEvent.eventsMissed, split: SessionEvent.split)
    let loop = EmbeddedEventLoop()
    let recorder = MessageRecorder(kinds: [0x27])

    init(configure: (inout SessionConfiguration) -> Void = { _ in }) throws {
        var configuration = SessionConfiguration(
            peerID: PeerID(1), displayName: "one", sessionName: "s", host: "127.0.0.1")
        // Peer id 1 is claimed, not a key's: insecure links, unless a test sets an identity and encryption.
        configuration.admission = .open
        configuration.isInsecure = true
        configure(&configuration)
        self.configuration = configuration
        components = SessionComponents(
            configuration: configuration,
            trusted: TrustedDevices(identity: configuration.identity, sessionName: configuration.sessionName),
            loop: loop, transports: [LANTransport()], logger: Logger(label: "test"), events: fanout)
        core = SessionCore(
            configuration: configuration, components: components, loop: loop, transports: [LANTransport()],
            logger: Logger(label: "test"))
        try core.add(recorder)
        core.runWithoutSockets()
    }

    /// A link accepted from `address`, active: the core has written its hello on it.
    func acceptedLink(from address: String = "10.0.0.7", port: Int = 40_000) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(loop: loop)
        try core.setUpStream(channel, role: .acceptor, transport: LANTransport(), endpoint: nil, for: nil).wait()
        try channel.connect(to: SocketAddress(ipAddress: address, port: port)).wait()
        return channel
    }

    /// The bytes `channel` wrote so far (after the loop's burst ended: small frames leave then).
    func outbound(_ channel: EmbeddedChannel) throws -> [UInt8] {
        var bytes: [UInt8] = []
        loop.run()
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) { bytes += buffer.readableBytesView }
        return bytes
    }

    /// Every frame `channel` wrote so far, decoded.
    func written(_ channel: EmbeddedChannel) throws -> [Message] {
        var decoder = StreamDecoder()
        decoder.append(contentsOf: try outbound(channel))
        var messages: [Message] = []
        while let message = try decoder.next() { messages.append(message) }
        return messages
    }

    /// Sends `message` to the core on `channel`, as the peer.
    func send(_ message: Message, on channel: EmbeddedChannel) throws {
        try channel.writeInbound(ByteBuffer(bytes: try StreamFraming.encode(message)))
    }

    /// The counts of the increments the recorder took, in order.
    var increments: [UInt64] {
        recorder.messages.compactMap(\.incrementCount)
    }

    /// What the core says of `peer`.
    func info(_ peer: PeerID) -> PeerInfo? {
        components.reporter.peerInfos().first { $0.peerID == peer }
    }
}
