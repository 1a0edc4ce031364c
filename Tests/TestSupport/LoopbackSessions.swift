@_spi(Diagnostics) import LanSession
import NIOCore
import WireCodec

/// A session on loopback with a chosen peer id (so that a test knows which peer leads a pair and coordinates: the
/// lowest id).
public func makeSession(
    _ id: UInt64, name: String? = nil, session: String = "test", datagrams: Bool = true, maxPeers: Int = 8,
    policy: InvitationPolicy = .acceptAll, replayMessages: Int = 65_536, inbox: String? = nil,
    eventLoop: (any EventLoop)? = nil, configure: (inout SessionConfiguration) -> Void = { _ in }
) throws(SessionError) -> Session {
    var configuration = SessionConfiguration(
        peerID: PeerID(id), displayName: name ?? "peer-\(id)", sessionName: session, host: "127.0.0.1",
        maxPeers: maxPeers, invitationPolicy: policy, replayBufferMessages: replayMessages, datagrams: datagrams)
    configuration.inbox = inbox
    // Numbered peer ids are claimed, not keys': insecure links, unless `configure` sets an identity and encryption
    // (see ``makeSecureSession(name:admission:configure:)``).
    configuration.admission = .open
    configuration.isInsecure = true
    configure(&configuration)
    return try Session(configuration: configuration, eventLoop: eventLoop)
}

/// A session on loopback with a fresh device key (its peer id is the key's) and encrypted links.
public func makeSecureSession(
    name: String, session: String = "test", admission: AdmissionMode = .open, maxPeers: Int = 8,
    configure: (inout SessionConfiguration) -> Void = { _ in }
) throws(SessionError) -> Session {
    var configuration = SessionConfiguration(
        displayName: name, sessionName: session, host: "127.0.0.1", maxPeers: maxPeers)
    configuration.admission = admission
    configure(&configuration)
    return try Session(configuration: configuration)
}

extension Session {
    /// The endpoint other sessions in the same process dial.
    public var endpoint: Endpoint {
        get async { Endpoint(host: "127.0.0.1", port: await port) }
    }

    /// Peers in the connected state.
    public func connectedPeers() async throws(SessionError) -> [PeerInfo] {
        try await peers().filter { $0.state == .connected }
    }
}

/// Starts every session and links each to every other one (each dials the ones after it).
public func mesh(_ sessions: [Session]) async throws(SessionError) {
    for session in sessions { try await session.start() }
    for (index, session) in sessions.enumerated() {
        for other in sessions[(index + 1)...] { try await session.connect(to: await other.endpoint) }
    }
}

/// Starts and links `sessions`, and waits until each is connected to every other one; false on timeout.
public func connectedMesh(_ sessions: [Session], timeout: Duration = .seconds(5)) async throws -> Bool {
    try await mesh(sessions)
    return try await waitUntil(timeout) {
        for session in sessions where try await session.connectedPeers().count != sessions.count - 1 {
            return false
        }
        return true
    }
}

public func stopAll(_ sessions: [Session]) async {
    for session in sessions { await session.stop() }
}
