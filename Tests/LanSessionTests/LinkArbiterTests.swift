import NIOCore
import Testing
import WireCodec

@testable import LanSession

/// Which of two links to one peer survives: the same on both sides, whoever dialled.
@Suite("LinkArbiter")
struct LinkArbiterTests {
    @Test("both sides keep the link dialled by the lower peer id")
    func differentDialers() {
        let low = PeerIDs.low
        let high = PeerIDs.high
        // On the low side: its own link (dialled by low) against the high peer's.
        #expect(LinkArbiter.keepsNewLink(local: low, peer: high, newDialer: low, oldDialer: high))
        #expect(!LinkArbiter.keepsNewLink(local: low, peer: high, newDialer: high, oldDialer: low))
        // On the high side, the same links, the same verdicts.
        #expect(LinkArbiter.keepsNewLink(local: high, peer: low, newDialer: low, oldDialer: high))
        #expect(!LinkArbiter.keepsNewLink(local: high, peer: low, newDialer: high, oldDialer: low))
    }

    @Test("a redial by the same dialer replaces the older link")
    func sameDialer() {
        #expect(
            LinkArbiter.keepsNewLink(
                local: PeerIDs.low, peer: PeerIDs.high, newDialer: PeerIDs.high, oldDialer: PeerIDs.high))
        #expect(
            LinkArbiter.keepsNewLink(
                local: PeerIDs.high, peer: PeerIDs.low, newDialer: PeerIDs.high, oldDialer: PeerIDs.high))
    }
}

extension LinkArbiterTests {
    @Test("the verdict on a new link names the dialer whose link stays")
    func verdicts() {
        let (low, high) = (PeerIDs.low, PeerIDs.high)
        #expect(LinkArbiter.verdict(local: low, peer: high, newRole: .dialer, oldRole: .acceptor) == .replaceOld)
        #expect(
            LinkArbiter.verdict(local: low, peer: high, newRole: .acceptor, oldRole: .dialer)
                == .refuseNew(keeping: low))
        #expect(
            LinkArbiter.verdict(local: high, peer: low, newRole: .dialer, oldRole: .acceptor)
                == .refuseNew(keeping: low))
        #expect(LinkArbiter.verdict(local: high, peer: low, newRole: .dialer, oldRole: .dialer) == .replaceOld)
    }
}

enum PeerIDs {
    static let low = PeerID(5)
    static let high = PeerID(9)
}
