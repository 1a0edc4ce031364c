import NIOCore
import Testing
import WireCodec

@_spi(Diagnostics) @testable import LanSession

/// Who gets past the handshake, as a value.
@Suite("Admission")
struct AdmissionTests {
    func admission(
        secret: Bool = false, insecure: Bool = false, policy: InvitationPolicy = .acceptAll, maxPeers: Int = 2
    ) -> Admission {
        var configuration = SessionConfiguration(
            peerID: PeerID(1), displayName: "one", sessionName: "s", maxPeers: maxPeers, invitationPolicy: policy,
            invitationTimeout: .seconds(30))
        configuration.admission = secret ? .secret(Array("secret".utf8)) : .open
        configuration.isInsecure = insecure
        return Admission(configuration: configuration)
    }

    func hello(
        _ id: UInt64 = 2, version: UInt32 = Wire.protocolVersion, session: String = "s", encrypts: Bool = false,
        psk: Bool = false
    ) -> Hello {
        var capabilities: Capabilities = encrypts ? [.encryption] : []
        if psk { capabilities.insert(.preSharedKey) }
        return Hello(
            protocolVersion: version, peerID: PeerID(id), capabilities: capabilities, displayName: "two",
            sessionName: session)
    }

    @Test("another version or session is refused with the reason; this very peer is dropped without a word")
    func hellos() {
        var admission = admission(insecure: true)
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

    @Test("encryption and the pre-shared key must match: a mismatch is refused and counted, a match goes on to Noise")
    func encryption() {
        var closed = admission(secret: true)
        #expect(closed.check(hello(encrypts: true, psk: true)) == .handshake)
        for other in [hello(), hello(encrypts: true)] {
            guard case .refuse(.authenticationFailed, _) = closed.check(other) else {
                Issue.record("\(other.capabilities) got past a secret")
                return
            }
        }
        closed.handshakeFailed()
        #expect(closed.failedHandshakes == 3)
        var open = admission()
        #expect(open.check(hello(encrypts: true)) == .handshake)
        guard case .refuse(.authenticationFailed, _) = open.check(hello(encrypts: true, psk: true)),
            case .refuse(.authenticationFailed, _) = open.check(hello())
        else {
            Issue.record("a pre-shared key, or no encryption, got past an open session")
            return
        }
        var insecure = admission(insecure: true)
        #expect(insecure.check(hello()) == .admit)
        guard case .refuse(.authenticationFailed, _) = insecure.check(hello(encrypts: true)) else {
            Issue.record("an encrypting peer got into an insecure one")
            return
        }
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
