import Logging
import NIOCore
import NIOEmbedded
import Testing
import WireCodec

@testable import LanSession

/// What a core knows of a peer's endpoints, asked endpoint by endpoint (as `members` ask it, thousands of times in a
/// large start) and gathered.
@Suite("Known endpoints")
struct KnownEndpointsTests {
    /// A core that is not started: it records endpoints and dials nothing.
    func core() -> SessionCore {
        let core = SessionCore(
            configuration: SessionConfiguration(
                peerID: PeerID(1), displayName: "one", sessionName: "s", host: "127.0.0.1"),
            loop: EmbeddedEventLoop(), transports: [LANTransport()], logger: Logger(label: "test"),
            events: EventFanout(missed: SessionEvent.eventsMissed))
        return core
    }

    @Test("knows(_:of:) answers as endpoints(of:) does: proven, static and discovered endpoints, and no others")
    func knowsAgreesWithEndpoints() {
        let core = core()
        let peer = core.record(for: PeerID(2))
        let proven = Endpoint(host: "10.0.0.2", port: 4000)
        let fixed = Endpoint(host: "10.0.0.3", port: 4000)
        let found = Endpoint(host: "10.0.0.4", port: 4000)
        let otherPeers = Endpoint(host: "10.0.0.5", port: 4000)
        peer.lastSucceeded[proven] = .now()
        core.staticEndpoints[fixed] = .some(PeerID(2))
        core.staticEndpoints[otherPeers] = .some(PeerID(3))
        peer.discovered["member 3 2"] = [found]
        let gathered = Set(core.endpoints(of: peer))
        for endpoint in [proven, fixed, found, otherPeers, Endpoint(host: "10.0.0.6", port: 1)] {
            #expect(core.knows(endpoint, of: peer) == gathered.contains(endpoint), "\(endpoint)")
        }
        #expect(gathered == [proven, fixed, found])
    }

    @Test("a record saying the same again changes nothing; a new endpoint in it is news")
    func sameRecordAgain() throws {
        let core = core()
        let endpoint = Endpoint(host: "10.0.0.2", port: 4000)
        core.addDiscovered([endpoint], peer: PeerID(2), name: "two", record: "member 3 2")
        let peer = try #require(core.peers[PeerID(2)])
        #expect(peer.discovered == ["member 3 2": [endpoint]])
        core.addDiscovered([endpoint], peer: PeerID(2), name: "two", record: "member 3 2")
        #expect(peer.discovered == ["member 3 2": [endpoint]])
        let moved = Endpoint(host: "10.0.0.9", port: 4000)
        core.addDiscovered([moved], peer: PeerID(2), name: "two", record: "member 3 2")
        #expect(peer.discovered == ["member 3 2": [moved]])
        #expect(core.endpoints(of: peer) == [moved])
    }
}
