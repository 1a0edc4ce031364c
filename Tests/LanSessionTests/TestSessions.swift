import Foundation
import LanSession
import NIOCore
import Synchronization
import WireCodec

/// Records a session's events and waits for the ones a test expects.
final class EventRecorder: Sendable {
    private final class Store: Sendable {
        let events = Mutex<[SessionEvent]>([])
    }

    private let store = Store()
    private let task: Task<Void, Never>

    init(_ session: Session) {
        let store = self.store
        let events = session.subscribe()  // now, so that nothing sent after init is missed
        task = Task {
            for await event in events { store.events.withLock { $0.append(event) } }
        }
    }

    deinit { task.cancel() }

    var events: [SessionEvent] { store.events.withLock { $0 } }

    /// Waits until `predicate` holds for the events so far; false on timeout.
    func wait(timeout: Duration = .seconds(5), until predicate: ([SessionEvent]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if predicate(events) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return predicate(events)
    }
}

/// Polls `condition` until it holds; false on timeout.
func eventually(timeout: Duration = .seconds(5), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}

/// A session on loopback with a chosen peer id (so tests know who coordinates: the lowest id).
func makeSession(
    _ id: UInt64, name: String? = nil, session: String = "test", datagrams: Bool = true, maxPeers: Int = 8,
    policy: InvitationPolicy = .acceptAll, replayMessages: Int = 65_536
) throws -> Session {
    try Session(
        configuration: SessionConfiguration(
            peerID: PeerID(id), displayName: name ?? "peer-\(id)", sessionName: session, host: "127.0.0.1",
            maxPeers: maxPeers, invitationPolicy: policy, replayBufferMessages: replayMessages, datagrams: datagrams))
}

extension Session {
    /// The endpoint other sessions in the same process dial.
    var endpoint: Endpoint {
        get async { Endpoint(host: "127.0.0.1", port: await port) }
    }

    /// Peers in the connected state.
    func connectedPeers() async throws -> [PeerInfo] {
        try await peers().filter { $0.state == .connected }
    }
}

/// Starts every session and links each to every other one (each dials the ones after it).
func mesh(_ sessions: [Session]) async throws {
    for session in sessions { try await session.start() }
    for (index, session) in sessions.enumerated() {
        for other in sessions[(index + 1)...] { try await session.connect(to: await other.endpoint) }
    }
}

func stopAll(_ sessions: [Session]) async {
    for session in sessions { await session.stop() }
}
