import Logging
import NIOCore
import NIOEmbedded
import Testing
import WireCodec

@testable import LanSession

/// The dialler as a value with a fake session: what it knows of where peers are, and when it dials them, on an
/// embedded loop whose clock the test moves.
@Suite("Dialler")
struct DiallerTests {
    /// Plays the session: knows the peers it is told, and hands each dial a promise the test completes.
    final class FakeSession: DiallerDelegate {
        var facts: [PeerID: DialFacts] = [:]
        var dials: [(endpoint: Endpoint, peer: PeerID?, promise: EventLoopPromise<Void>)] = []
        var staticFailures: [Endpoint] = []
        let loop: EmbeddedEventLoop

        init(loop: EmbeddedEventLoop) { self.loop = loop }

        func dialFacts(for peer: PeerID) -> DialFacts? { facts[peer] }

        func connect(to endpoint: Endpoint, for peer: PeerID?) -> EventLoopFuture<Void>? {
            let promise = loop.makePromise(of: Void.self)
            dials.append((endpoint, peer, promise))
            return promise.futureResult
        }

        func staticDialFailed(_ endpoint: Endpoint, reason: String) { staticFailures.append(endpoint) }

        func runsTransport(named name: String) -> Bool { name == "lan" }

        /// Fails every dial under way, as a refused connection.
        func failAll() {
            for dial in dials { dial.promise.fail(SessionError(.io, "refused")) }
            dials = []
        }
    }

    let loop = EmbeddedEventLoop()
    let peer = PeerID(2)

    func dialler(_ session: FakeSession) -> Dialler {
        let dialler = Dialler(
            loop: loop, logger: Logger(label: "test"), localPeer: PeerID(1), initialDelay: .milliseconds(100),
            maximumDelay: .seconds(2), standbyMaximumDelay: .seconds(10))
        dialler.delegate = session
        return dialler
    }

    func wanted(covered: Set<PathKey> = [], connected: Bool = false) -> DialFacts {
        DialFacts(wanted: true, left: false, connected: connected, coveredPaths: covered)
    }

    @Test("knows(_:of:) answers as endpoints(of:) does: proven, static and discovered endpoints, and no others")
    func knowsAgreesWithEndpoints() {
        let session = FakeSession(loop: loop)
        let dialler = dialler(session)
        let proven = Endpoint(host: "10.0.0.2", port: 4000)
        let fixed = Endpoint(host: "10.0.0.3", port: 4000)
        let found = Endpoint(host: "10.0.0.4", port: 4000)
        let otherPeers = Endpoint(host: "10.0.0.5", port: 4000)
        dialler.proved(proven, for: peer)
        dialler.addStatic(fixed)
        dialler.staticEndpoint(fixed, isPeer: peer)
        dialler.addStatic(otherPeers)
        dialler.staticEndpoint(otherPeers, isPeer: PeerID(3))
        _ = dialler.setRecord("member 3 2", endpoints: [found], for: peer)
        let gathered = Set(dialler.endpoints(of: peer))
        for endpoint in [proven, fixed, found, otherPeers, Endpoint(host: "10.0.0.6", port: 1)] {
            #expect(dialler.knows(endpoint, of: peer) == gathered.contains(endpoint), "\(endpoint)")
        }
        #expect(gathered == [proven, fixed, found])
        #expect(dialler.endpoints(of: peer).first == proven, "a proven endpoint is tried first")
        #expect(session.dials.isEmpty)
    }

    @Test("a record saying the same again is no news; a new endpoint in it is; another record keeps its own")
    func sameRecordAgain() {
        let session = FakeSession(loop: loop)
        let dialler = dialler(session)
        let endpoint = Endpoint(host: "10.0.0.2", port: 4000)
        #expect(dialler.setRecord("member 3 2", endpoints: [endpoint], for: peer))
        #expect(!dialler.setRecord("member 3 2", endpoints: [endpoint], for: peer))
        let moved = Endpoint(host: "10.0.0.9", port: 4000)
        #expect(dialler.setRecord("member 3 2", endpoints: [moved], for: peer))
        #expect(dialler.endpoints(of: peer) == [moved])
        #expect(dialler.setRecord("dns-sd", endpoints: [endpoint], for: peer))
        dialler.removeRecord("member 3 2")
        #expect(dialler.endpoints(of: peer) == [endpoint])
        #expect(dialler.names(peer))
        dialler.removeRecord("dns-sd")
        #expect(!dialler.hasEndpoints(peer))
        #expect(session.dials.isEmpty, "records alone dial nothing")
    }

    @Test("every endpoint whose path has no link is dialled once; a failed one again after its backoff")
    func dialsAndBackoff() throws {
        let session = FakeSession(loop: loop)
        let dialler = dialler(session)
        let covered = Endpoint(host: "10.0.0.1", port: 4000)
        let open = Endpoint(host: "10.0.0.2", port: 4000)
        let bluetooth = Endpoint(transport: "rfcomm", host: "00:AA:01:00:00:00", port: 5)
        _ = dialler.setRecord("dns-sd", endpoints: [covered, open, bluetooth], for: peer)
        session.facts[peer] = wanted(covered: [Dialler.path(of: covered)])
        dialler.start()
        dialler.reconcile(peer)
        #expect(session.dials.map(\.endpoint) == [open], "the covered path and the transport not run are skipped")
        dialler.reconcile(peer)
        #expect(session.dials.count == 1, "one dial at a time per endpoint")
        session.failAll()
        #expect(session.dials.isEmpty, "a failed dial waits for its backoff")
        loop.advanceTime(by: .milliseconds(130))
        #expect(session.dials.map(\.endpoint) == [open], "retried within the first delay and its jitter")
        session.dials[0].promise.succeed()
        dialler.dialEnded(open, for: peer, failed: false)
        session.facts[peer] = wanted(covered: [Dialler.path(of: covered), Dialler.path(of: open)])
        session.dials = []
        dialler.reconcile(peer)
        #expect(session.dials.isEmpty, "every path has a link")
    }

    @Test(
        "a peer that comes back on another port forgets the port it had, and its dial; a dial that ends leaves nothing")
    func newIncarnationOnAnotherPort() {
        let session = FakeSession(loop: loop)
        let dialler = dialler(session)
        let other = Endpoint(host: "10.0.0.3", port: 4000)
        dialler.proved(other, for: peer)
        session.facts[peer] = wanted()
        dialler.start()
        for port in 5000..<5100 {
            dialler.proved(Endpoint(host: "10.0.0.2", port: port), for: peer)
            dialler.peerLost(peer)
            dialler.reconcile(peer)
            loop.advanceTime(by: .milliseconds(130))
            session.failAll()
        }
        #expect(dialler.provenEndpoints(of: peer).count == 2, "one per address: \(dialler.provenEndpoints(of: peer))")
        #expect(dialler.tableSizes["diallerDials"] == 2)
        // Both paths get a link again: their dials end, and nothing of them is kept.
        session.facts[peer] = wanted(covered: [Dialler.path(of: other)], connected: true)
        loop.advanceTime(by: .seconds(3))
        dialler.dialEnded(Endpoint(host: "10.0.0.2", port: 5099), for: peer, failed: false)
        #expect(dialler.tableSizes["diallerDials"] == 0, "\(dialler.tableSizes)")
    }

    @Test("a peer that left is not dialled, and where it was proves nothing any more")
    func peerLeft() {
        let session = FakeSession(loop: loop)
        let dialler = dialler(session)
        let endpoint = Endpoint(host: "10.0.0.2", port: 4000)
        dialler.proved(endpoint, for: peer)
        session.facts[peer] = DialFacts(wanted: true, left: true, connected: false, coveredPaths: [])
        dialler.start()
        dialler.reconcile(peer)
        #expect(session.dials.isEmpty)
        dialler.peerLeft(peer)
        #expect(!dialler.hasEndpoints(peer))
        #expect(!dialler.names(peer))
    }

    @Test("a lost peer is redialled on every endpoint after the first delay, not at once")
    func lostPeer() {
        let session = FakeSession(loop: loop)
        let dialler = dialler(session)
        let endpoints = [Endpoint(host: "10.0.0.2", port: 4000), Endpoint(host: "10.0.0.3", port: 4000)]
        _ = dialler.setRecord("dns-sd", endpoints: endpoints, for: peer)
        session.facts[peer] = wanted()
        dialler.start()
        dialler.peerLost(peer)
        dialler.reconcile(peer)
        #expect(session.dials.isEmpty)
        loop.advanceTime(by: .milliseconds(130))
        #expect(Set(session.dials.map(\.endpoint)) == Set(endpoints))
    }

    @Test("a disconnected peer is not redialled, on its static or its discovered endpoints, however long one waits")
    func disconnectedPeer() {
        let session = FakeSession(loop: loop)
        let dialler = dialler(session)
        let given = Endpoint(host: "10.0.0.2", port: 4000)
        let found = Endpoint(host: "10.0.0.3", port: 4000)
        dialler.addStatic(given)
        dialler.staticEndpoint(given, isPeer: peer)
        _ = dialler.setRecord("dns-sd", endpoints: [found], for: peer)
        session.facts[peer] = wanted()
        dialler.start()
        #expect(Set(session.dials.map(\.endpoint)) == [given, found])
        for dial in session.dials { dial.promise.succeed() }
        for endpoint in [given, found] { dialler.dialEnded(endpoint, for: peer, failed: false) }
        session.dials = []
        // Session.disconnect(_:): the peer has left, its dials stop, then its links close.
        session.facts[peer] = DialFacts(wanted: true, left: true, connected: false, coveredPaths: [])
        dialler.stopDialling(peer)
        for endpoint in [given, found] {
            dialler.linkClosed(dialling: endpoint, intended: peer, helloReceived: true)
        }
        dialler.reconcile(peer)
        loop.advanceTime(by: .seconds(60))
        #expect(session.dials.isEmpty, "redialled \(session.dials.map(\.endpoint))")
    }

    @Test("a static endpoint is dialled at the start; a failure is reported and retried after its backoff")
    func staticEndpoint() {
        let session = FakeSession(loop: loop)
        let dialler = dialler(session)
        let endpoint = Endpoint(host: "10.0.0.7", port: 4000)
        dialler.addStatic(endpoint)
        #expect(session.dials.isEmpty, "nothing is dialled before the start")
        dialler.start()
        #expect(session.dials.map(\.endpoint) == [endpoint] && session.dials[0].peer == nil)
        session.failAll()
        #expect(session.staticFailures == [endpoint])
        loop.advanceTime(by: .milliseconds(130))
        #expect(session.dials.map(\.endpoint) == [endpoint])
        dialler.stop()
        session.failAll()
        loop.advanceTime(by: .seconds(5))
        #expect(session.dials.isEmpty, "a stopped dialler dials nothing")
    }

    @Test("a static endpoint that led to a stranger is dialled again after its backoff; a member's is the member's")
    func staticEndpointToAStranger() {
        let session = FakeSession(loop: loop)
        let dialler = dialler(session)
        let endpoint = Endpoint(host: "10.0.0.7", port: 4000)
        dialler.addStatic(endpoint)
        dialler.start()
        // Connected; a hello arrived, but the handshake made the link a stranger's, which then closed.
        session.dials.removeFirst().promise.succeed()
        dialler.linkClosed(dialling: endpoint, intended: nil, helloReceived: true)
        #expect(session.dials.isEmpty, "not at once")
        loop.advanceTime(by: .milliseconds(130))
        #expect(session.dials.map(\.endpoint) == [endpoint] && session.dials[0].peer == nil)
        // This time it leads to a member: the endpoint is that peer's, redialled with the peer, not on its own.
        session.dials.removeFirst().promise.succeed()
        dialler.staticEndpoint(endpoint, isPeer: peer)
        dialler.linkClosed(dialling: endpoint, intended: nil, helloReceived: true)
        loop.advanceTime(by: .seconds(5))
        #expect(session.dials.isEmpty)
        #expect(dialler.endpoints(of: peer) == [endpoint] && dialler.isStatic(peer))
        dialler.stop()
    }
}
