import Foundation
import LinkCrypto
import Logging
import NIOCore
import NIOEmbedded
import Testing
import WireCodec

@testable import LanSession

/// The trust component's decisions, told to a delegate that records them: what it asks of the session for a request
/// to pair, a member's statements, a removal.
@Suite("TrustKeeper")
struct TrustKeeperTests {
    /// Records what the component asks, in order.
    final class Recorder: TrustKeeperDelegate {
        var calls: [String] = []
        var events: [SessionEvent] = []
        var dialable: Set<PeerID> = []

        var written: [Message] = []

        func write(_ message: Message, on link: Link) {
            calls.append("write \(message)")
            written.append(message)
        }
        func writePending(of link: Link) { calls.append("writePending") }
        func drop(_ link: Link, _ reason: String) { calls.append("drop \(reason)") }
        func handshakeFailed(_ link: Link, _ detail: String, refusal: String?) { calls.append("failed \(detail)") }
        func refuseUntrusted(_ link: Link, _ detail: String) { calls.append("refuse \(detail)") }
        func admitTrusted(_ link: Link) { calls.append("admit") }
        func emit(_ event: SessionEvent) {
            calls.append("emit")
            events.append(event)
        }
        func notPaired(_ notice: SessionNotice) { calls.append("notPaired") }
        func canDial(_ peer: PeerID) -> Bool { dialable.contains(peer) }
        func redial(_ peer: PeerID) { calls.append("redial \(peer)") }
        func dropRemoved(_ peer: PeerID) { calls.append("drop \(peer)") }
        func broadcastTrust() { calls.append("broadcast") }
    }

    let me = DeviceIdentity.generate()
    let friend = DeviceIdentity.generate()
    let newcomer = DeviceIdentity.generate()

    func keeper(
        _ admission: AdmissionMode = .paired, store: TrustStore? = nil, recorder: Recorder
    ) throws -> TrustKeeper {
        var trusted = TrustedDevices(identity: me, sessionName: "s")
        _ = try trusted.pair(publicKey: friend.publicKey, signingKey: friend.signingPublicKey, name: "f", now: Date())
        let keeper = TrustKeeper(
            admission: admission, identity: me, trusted: trusted, store: store,
            logger: Logger(label: "trust"))
        keeper.delegate = recorder
        return keeper
    }

    @Test("two keepers run the Noise handshake through their delegates; a peer id that is not its key's is refused")
    func noiseHandshake() throws {
        let loop = EmbeddedEventLoop()
        func link(_ role: LinkStateMachine.Role, _ identity: DeviceIdentity, hearing hello: Hello) throws -> Link {
            let channel = EmbeddedChannel(loop: loop)
            try channel.connect(to: SocketAddress(ipAddress: "10.0.0.7", port: 40_000)).wait()
            let link = Link(
                channel: channel, role: role, transport: LANTransport(), endpoint: nil, intendedPeer: nil,
                liveness: Liveness(heartbeatInterval: .milliseconds(250), timeout: .seconds(2), now: .now()),
                security: LinkSecurity(role: role, identity: identity, psk: nil))
            link.identified(by: hello)
            return link
        }
        func hello(_ identity: DeviceIdentity, claiming peer: PeerID? = nil) -> Hello {
            Hello(
                peerID: peer ?? identity.peerID, incarnation: 1, capabilities: [.encryption], displayName: "d",
                sessionName: "s")
        }
        /// Runs the handshake between a dialer (`me`, its hello `sent`) and an acceptor (`friend`).
        func handshake(sent: Hello) throws -> (dialer: Recorder, acceptor: Recorder, link: Link) {
            let (dialer, acceptor) = (Recorder(), Recorder())
            let mine = try keeper(.open, recorder: dialer)
            let theirs = TrustKeeper(
                admission: .open, identity: friend, trusted: TrustedDevices(identity: friend, sessionName: "s"),
                store: nil, logger: Logger(label: "trust"))
            theirs.delegate = acceptor
            let answer = hello(friend)
            let dialerLink = try link(.dialer, me, hearing: answer)
            let acceptorLink = try link(.acceptor, friend, hearing: sent)
            try dialerLink.security!.remember(sent: sent)
            try acceptorLink.security!.remember(sent: answer)
            mine.beginHandshake(answer, on: dialerLink)
            theirs.beginHandshake(sent, on: acceptorLink)
            for _ in 0..<4 {
                let (toAcceptor, toDialer) = (dialer.written, acceptor.written)
                (dialer.written, acceptor.written) = ([], [])
                for case .noise(let bytes) in toAcceptor { theirs.handshakeMessage(bytes, on: acceptorLink) }
                for case .noise(let bytes) in toDialer { mine.handshakeMessage(bytes, on: dialerLink) }
            }
            return (dialer, acceptor, dialerLink)
        }
        let honest = try handshake(sent: hello(me))
        #expect(honest.dialer.calls.filter { !$0.hasPrefix("write ") } == ["writePending", "admit"])
        #expect(honest.acceptor.calls.filter { !$0.hasPrefix("write ") } == ["writePending", "admit"])
        #expect(honest.link.publicKey == friend.publicKey, "the dialer knows whom it reached")
        let forged = try handshake(sent: hello(me, claiming: newcomer.peerID))
        #expect(forged.acceptor.calls.last?.hasPrefix("failed it claims to be \(newcomer.peerID)") == true)
        #expect(!forged.acceptor.calls.contains("admit"))
    }

    @Test("a request to pair: refused under another admission, with itself, a trusted or unknown device; else dialled")
    func requestPairing() throws {
        let recorder = Recorder()
        #expect(throws: SessionError.self) {
            try self.keeper(.open, recorder: recorder).requestPairing(with: self.newcomer.peerID)
        }
        let trust = try keeper(recorder: recorder)
        for peer in [me.peerID, friend.peerID, newcomer.peerID] {
            #expect(throws: SessionError.self) { try trust.requestPairing(with: peer) }
        }
        #expect(recorder.calls.isEmpty)
        #expect(trust.dialsOnlyToPair(newcomer.peerID) == false)
        #expect(trust.dialsOnlyToPair(friend.peerID) == nil)
        recorder.dialable = [newcomer.peerID]
        #expect(try trust.requestPairing(with: newcomer.peerID) == nil)
        #expect(recorder.calls == ["redial \(newcomer.peerID)"])
        #expect(trust.dialsOnlyToPair(newcomer.peerID) == true)
        #expect(trust.requests.isEmpty)
    }

    @Test("a member's introduction is told, dialled, saved and sent to the members; its removal drops the device")
    func statements() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("trust-\(UInt64.random(in: 1...UInt64.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = TrustStore(path: directory.appendingPathComponent("trusted-devices.json").path)
        let recorder = Recorder()
        let trust = try keeper(store: store, recorder: recorder)
        var friends = TrustedDevices(identity: friend, sessionName: "s")
        _ = try friends.pair(
            publicKey: newcomer.publicKey, signingKey: newcomer.signingPublicKey, name: "new", now: Date())
        trust.received(friends.shared)
        #expect(recorder.calls == ["emit", "redial \(newcomer.peerID)", "broadcast"])
        guard case .introduced(let device) = recorder.events.first else {
            Issue.record("the introduction was not told")
            return
        }
        #expect(device.peerID == newcomer.peerID && device.introducedBy == friend.peerID)
        #expect(trust.devices.contains { $0.peerID == newcomer.peerID })
        let saved = try store.load(identity: me, sessionName: "s")
        #expect(saved.devices[newcomer.peerID]?.trust == .introduced)
        #expect(!trust.statementMessages.isEmpty)

        recorder.calls = []
        try friends.remove(newcomer.peerID, now: Date())
        trust.received(friends.shared)
        #expect(recorder.calls == ["emit", "drop \(newcomer.peerID)", "broadcast"])
        #expect(recorder.events.last == .unpaired(newcomer.peerID, by: friend.peerID))
        #expect(!trust.devices.contains { $0.peerID == newcomer.peerID })
        #expect(trust.removals.map { $0.peerID } == [newcomer.peerID])
    }

    @Test("removing a device tells, sends and drops it; a member that removed this device makes it forget the rest")
    func removals() throws {
        let recorder = Recorder()
        #expect(throws: SessionError.self) { try self.keeper(.open, recorder: recorder).unpair(self.friend.peerID) }
        let trust = try keeper(recorder: recorder)
        try trust.unpair(friend.peerID)
        #expect(recorder.calls == ["emit", "broadcast", "drop \(friend.peerID)"])
        #expect(recorder.events == [.unpaired(friend.peerID, by: me.peerID)])
        #expect(trust.devices.isEmpty)

        recorder.calls = []
        let other = try keeper(recorder: recorder)
        other.removedBy(newcomer.peerID)  // not a trusted device: nothing
        #expect(recorder.calls.isEmpty)
        other.removedBy(friend.peerID)
        #expect(recorder.calls == ["broadcast"])
        #expect(other.devices.isEmpty)
        #expect(other.dialsOnlyToPair(friend.peerID) == false)
        #expect(other.statementMessages.isEmpty)
    }
}
