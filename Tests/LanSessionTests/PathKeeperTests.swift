import Logging
import NIOCore
import NIOEmbedded
import Testing
import WireCodec

@testable import LanSession

@Suite struct PathKeeperTests {
    @Test func lowerPeerIDLeads() {
        let keeper = PathKeeper<FakePathKeeperDelegate>(
            localPeer: PeerID(5), livenessTimeout: .seconds(1), loop: EmbeddedEventLoop(), logger: Logger(label: "test")
        )
        #expect(keeper.isLeader(of: PeerID(6)))
        #expect(!keeper.isLeader(of: PeerID(4)))
    }

    @Test func afterDetachDecidesFromWhatIsLeft() {
        typealias After = PathKeeper<FakePathKeeperDelegate>.AfterDetach
        func after(
            handshaken: Bool = false, replaced: Bool = false, byPeer: Bool = false, underWay: Bool = false,
            connected: Bool = true, linksLeft: Bool = false
        ) -> After {
            After(
                handshakenLinksLeft: handshaken, replaced: replaced, replacedByPeer: byPeer,
                handshakeUnderWay: underWay,
                connected: connected, linksLeft: linksLeft)
        }
        #expect(after(handshaken: true) == .carryOn)
        #expect(after(replaced: true) == .carryOn)
        #expect(after(byPeer: true) == .awaitHandshake)
        #expect(after(underWay: true, linksLeft: true) == .awaitHandshake)
        #expect(after(underWay: true, connected: false, linksLeft: true) == .redial)
        #expect(after(connected: false, linksLeft: true) == .redial)
        #expect(after(connected: false) == .lose)
        #expect(after() == .lose)
        #expect(after(linksLeft: true) == .lose)
    }

    @Test func aConnectedPeerWhoseOnlyLinkGoesIsLost() {
        let loop = EmbeddedEventLoop()
        let (keeper, delegate) = Self.keeper(on: loop)
        let (peer, link) = Self.connectedPeer(on: loop)
        keeper.detach(link, from: peer)
        #expect(peer.active == nil)
        #expect(peer.state == .reconnecting)
        #expect(
            delegate.calls == [
                "published closed", "detached", "no active link", "path asked", "no active link",
                "lost connected",
            ])
    }

    @Test func aHandshakeUnderWayHoldsThePeerForTheLivenessTimeout() {
        let loop = EmbeddedEventLoop()
        let (keeper, delegate) = Self.keeper(on: loop)
        delegate.handshakeUnderWay = true
        let (peer, link) = Self.connectedPeer(on: loop)
        keeper.detach(link, from: peer)
        #expect(peer.state == .connected)
        #expect(delegate.calls.last == "reconcile")
        loop.advanceTime(by: .milliseconds(999))
        #expect(peer.state == .connected)
        loop.advanceTime(by: .milliseconds(1))
        #expect(peer.state == .reconnecting)
        #expect(delegate.calls.last == "lost connected")
    }

    @Test func theFollowerDoesNotChoose() {
        let loop = EmbeddedEventLoop()
        let delegate = FakePathKeeperDelegate()
        let keeper = PathKeeper<FakePathKeeperDelegate>(
            localPeer: PeerID(3), livenessTimeout: .seconds(1), loop: loop, logger: Logger(label: "test"))
        keeper.delegate = delegate
        let (peer, _) = Self.connectedPeer(on: loop)
        keeper.choosePath(for: peer)
        #expect(delegate.calls.isEmpty)
    }

    @Test func aDuplicateOnAPathIsArbitrated() {
        let loop = EmbeddedEventLoop()
        let (keeper, delegate) = Self.keeper(on: loop)
        let (peer, old) = Self.connectedPeer(on: loop)
        // Peer 2 dialled the old link; this side (1, the lower id) dials the new one: it replaces the old.
        let mine = Self.link(role: .dialer, on: loop)
        #expect(keeper.admit(mine, to: peer, restarted: false))
        #expect(peer.links[ObjectIdentifier(mine)] === mine)
        #expect(peer.links[ObjectIdentifier(old)] == nil)
        // Another from peer 2 on the same path is refused: the one dialled by the lower id stays.
        delegate.calls = []
        let theirs = Self.link(role: .acceptor, on: loop)
        #expect(!keeper.admit(theirs, to: peer, restarted: false))
        #expect(peer.links[ObjectIdentifier(theirs)] == nil)
        #expect(delegate.calls == ["perform"])
    }

    @Test func aRestartedPeersLinksOfBeforeGo() {
        let loop = EmbeddedEventLoop()
        let (keeper, delegate) = Self.keeper(on: loop)
        let (peer, old) = Self.connectedPeer(on: loop)
        let new = Self.link(role: .dialer, on: loop)
        #expect(keeper.admit(new, to: peer, restarted: true))
        #expect(peer.links[ObjectIdentifier(old)] == nil)
        #expect(peer.links[ObjectIdentifier(new)] === new)
        #expect(delegate.calls.first == "perform")
        #expect(delegate.calls.contains("restarted"))
    }

    private static func keeper(
        on loop: EmbeddedEventLoop
    ) -> (PathKeeper<FakePathKeeperDelegate>, FakePathKeeperDelegate) {
        let delegate = FakePathKeeperDelegate()
        let keeper = PathKeeper<FakePathKeeperDelegate>(
            localPeer: PeerID(1), livenessTimeout: .seconds(1), loop: loop, logger: Logger(label: "test"))
        keeper.delegate = delegate
        return (keeper, delegate)
    }

    /// Peer 2, connected over one active link.
    private static func connectedPeer(on loop: EmbeddedEventLoop) -> (PeerRecord, Link) {
        let link = Self.link(role: .acceptor, on: loop)
        let peer = PeerRecord(id: PeerID(2), replayBufferMessages: 16, replayBufferBytes: 1 << 16)
        peer.add(link)
        _ = peer.connecting()
        peer.activate(link)
        _ = peer.connected()
        return (peer, link)
    }
}

extension PathKeeperTests {
    /// A link of `role`, on the path every such link of these tests shares.
    fileprivate static func link(role: LinkStateMachine.Role, on loop: EmbeddedEventLoop) -> Link {
        Link(
            channel: EmbeddedChannel(loop: loop), role: role, transport: LANTransport(), endpoint: nil,
            intendedPeer: nil, liveness: Liveness(heartbeatInterval: .seconds(1), timeout: .seconds(3), now: .now()))
    }
}

/// Records what the keeper asks, answering as a test sets.
final class FakePathKeeperDelegate: PathKeeperDelegate {
    var calls: [String] = []
    var handshakeUnderWay = false
    var isRunningNow: Bool { true }

    func pathToActivate(for peer: PeerRecord, now: NIODeadline) -> Link? {
        calls.append("path asked")
        return nil
    }

    func isCurrent(_ peer: PeerRecord) -> Bool { true }
    func hasHandshakeUnderWay(on path: PathKey, for id: PeerID, besides link: Link) -> Bool { handshakeUnderWay }
    func canRedial(_ peer: PeerRecord) -> Bool { true }
    func perform(_ actions: [LinkStateMachine.Action], on link: Link) { calls.append("perform") }
    func close(_ link: Link, reason: String) { calls.append("close") }
    func publishLink(_ link: Link, of peer: PeerRecord, closed: Bool) {
        calls.append(closed ? "published closed" : "published")
    }
    func publishState(of peer: PeerRecord) { calls.append("state") }
    func activeLinkChanged(of id: PeerID, to link: Link?) { calls.append(link == nil ? "no active link" : "active") }
    func resumed(on link: Link, of peer: PeerRecord, outcome: ReliableChannel.ResumeOutcome) {
        calls.append("resumed")
    }
    func detached(_ link: Link, from peer: PeerRecord) { calls.append("detached") }
    func lost(_ peer: PeerRecord, wasConnected: Bool) { calls.append(wasConnected ? "lost connected" : "lost") }
    func reconcile(_ id: PeerID) { calls.append("reconcile") }
    func restarted(_ peer: PeerRecord) { calls.append("restarted") }
}
