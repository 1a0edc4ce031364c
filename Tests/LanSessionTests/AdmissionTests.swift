import NIOCore
import Testing
import WireCodec

@testable import LanSession

/// Who gets past the handshake, as a value.
@Suite("Admission")
struct AdmissionTests {
    func admission(secret: Bool = false, policy: InvitationPolicy = .acceptAll, maxPeers: Int = 2) -> Admission {
        var configuration = SessionConfiguration(
            peerID: PeerID(1), displayName: "one", sessionName: "s", maxPeers: maxPeers, invitationPolicy: policy,
            invitationTimeout: .seconds(30))
        if secret { configuration.secret = Array("secret".utf8) }
        return Admission(configuration: configuration)
    }

    func hello(
        _ id: UInt64 = 2, version: UInt32 = Wire.protocolVersion, session: String = "s", key: Bool = false
    ) -> Hello {
        Hello(
            protocolVersion: version, peerID: PeerID(id), displayName: "two", sessionName: session,
            extensions: key ? [.authentication(publicKey: [UInt8](repeating: 7, count: Wire.authKeyLength))] : [])
    }

    @Test("another version or session is refused with the reason; this very peer is dropped without a word")
    func hellos() {
        var admission = admission()
        #expect(admission.check(hello()) == .admit)
        guard case .refuse(.versionMismatch, _) = admission.check(hello(version: Wire.protocolVersion + 1)) else {
            Issue.record("another version was not refused")
            return
        }
        guard case .refuse(.wrongSession, _) = admission.check(hello(session: "other")) else {
            Issue.record("another session was not refused")
            return
        }
        #expect(admission.check(hello(1)) == .ourselves)
        #expect(admission.check(hello(0)) == .ourselves, "peer id 0 is nobody")
        #expect(admission.failedHandshakes == 0)
    }

    @Test("with a secret a hello without a key is refused and counted; without one a hello with a key is refused")
    func secrets() {
        var closed = admission(secret: true)
        #expect(closed.check(hello(key: true)) == .prove)
        guard case .refuse(.authenticationFailed, _) = closed.check(hello()) else {
            Issue.record("a hello without a key got past a secret")
            return
        }
        closed.proofFailed()
        #expect(closed.failedHandshakes == 2)
        var open = admission()
        guard case .refuse(.authenticationFailed, _) = open.check(hello(key: true)) else {
            Issue.record("a hello with a key got into a session without a secret")
            return
        }
        #expect(open.failedHandshakes == 0, "a peer with a secret is no stranger to count")
    }

    @Test("a member coming back is accepted; a newcomer while there is room, as the policy says")
    func invitations() {
        let auto = admission()
        let invitation = Invitation(timeoutMilliseconds: 5_000)
        #expect(auto.consider(invitation, isMember: false, seatsTaken: 1) == .accept)
        guard case .full = auto.consider(invitation, isMember: false, seatsTaken: 2) else {
            Issue.record("a full session took a newcomer")
            return
        }
        #expect(auto.consider(invitation, isMember: true, seatsTaken: 2) == .accept, "members keep their seat")
        let asking = admission(policy: .ask)
        #expect(asking.consider(invitation, isMember: false, seatsTaken: 0) == .ask(wait: .seconds(5)))
        #expect(
            asking.consider(Invitation(timeoutMilliseconds: 60_000), isMember: false, seatsTaken: 0)
                == .ask(wait: .seconds(30)), "never longer than this side gives itself")
    }
}
