@_spi(Diagnostics) import LanSession
import Logging
import NIOCore

/// Two LanSession sessions on 127.0.0.1 in this process, B linked to A, for timing A's pings to B.
///
/// A runs on one event loop and B on the other. A round trip is one `try await a.ping(b, unreliable:)`: the call
/// hops from the async caller to A's loop, where the session makes a nonce, a promise and a 2 s timeout, encodes a
/// ping frame and writes it (on the TCP link, or as a datagram with the link token and a sequence number); B decodes
/// it, checks it and answers with a pong the same way; A decodes the pong, matches its nonce and succeeds the
/// promise, and the caller resumes from `.get()`.
///
/// Compared with the raw rows, a sample therefore also includes: `Session`'s check that it was not stopped, the
/// nonce and the pending-ping table, frame encoding and decoding on both sides, B's liveness and (for datagrams)
/// link-token and address checks, and the size of a ping frame instead of 3 bytes. It does not include the
/// session's own 50 ms housekeeping tick or its heartbeats and datagram probes, except where one happens to run on
/// a loop while a ping is in flight.
final class SessionPair: Sendable {
    /// The pinging session.
    let a: Session
    /// The answering session.
    let b: Session

    private init(a: Session, b: Session) {
        self.a = a
        self.b = b
    }

    /// Starts A on `loopA` and B on `loopB`, both listening on 127.0.0.1, and has B connect to A.
    static func start(loopA: any EventLoop, loopB: any EventLoop, sealed: Bool = false) async throws -> SessionPair {
        var logger = Logger(label: "session-bench")
        logger.logLevel = .notice
        let a = try Session(
            configuration: configuration(name: "bench-a", sealed: sealed), eventLoop: loopA, logger: logger)
        let b = try Session(
            configuration: configuration(name: "bench-b", sealed: sealed), eventLoop: loopB, logger: logger)
        let pair = SessionPair(a: a, b: b)
        do {
            let port = try await a.start()
            try await b.start()
            try await b.connect(to: Endpoint(host: SessionBench.loopback, port: port))
        } catch {
            await pair.stop()
            throw error
        }
        return pair
    }

    /// Sealed: the Noise handshake and encrypted links, as every session runs (admission open); else insecure links,
    /// the baseline that shows what encryption costs.
    private static func configuration(name: String, sealed: Bool) -> SessionConfiguration {
        var configuration = SessionConfiguration(
            displayName: name, sessionName: "session-bench", host: SessionBench.loopback, port: 0)
        configuration.admission = .open
        configuration.isInsecure = !sealed
        return configuration
    }

    /// Waits until A lists B as connected with datagrams getting through (`.udp`), and B lists A as connected.
    ///
    /// Throws, saying what each side last reported, if that does not happen within `timeout`.
    func waitUntilConnected(within timeout: Duration) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            let seenByA = try await a.peers().first { $0.peerID == b.peerID }
            let seenByB = try await b.peers().first { $0.peerID == a.peerID }
            if let seenByA, Self.isReady(seenByA), seenByB?.state == .connected {
                return
            }
            guard clock.now < deadline else {
                throw BenchError(
                    "B did not connect to A with UDP datagrams within \(timeout); "
                        + "A sees B as \(Self.describe(seenByA)), B sees A as \(Self.describe(seenByB))")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Throws unless A still sends B's unreliable messages as UDP datagrams (and not on the TCP link).
    func checkDatagramRoute() async throws {
        let seenByA = try await a.peers().first { $0.peerID == b.peerID }
        guard let seenByA, Self.isReady(seenByA) else {
            throw BenchError("A no longer reaches B over UDP: A sees B as \(Self.describe(seenByA))")
        }
    }

    /// Stops both sessions.
    func stop() async {
        await b.stop()
        await a.stop()
    }

    private static func isReady(_ peer: PeerInfo) -> Bool {
        peer.state == .connected && peer.unreliable == .udp
    }

    private static func describe(_ peer: PeerInfo?) -> String {
        guard let peer else { return "unknown" }
        return "\(peer.state.rawValue) (unreliable: \(peer.unreliable.rawValue))"
    }
}
