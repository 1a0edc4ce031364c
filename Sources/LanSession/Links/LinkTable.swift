import NIOCore
import WireCodec

/// The session's open links, accepted or dialled, from their first byte to their close; the datagram tokens of the
/// handshaken ones; and the caps on accepted links that have not proved themselves yet.
final class LinkTable {
    /// Most accepted links that have not proved themselves, in all and from one address.
    private let maxUnproven: Int
    private let maxUnprovenPerAddress: Int
    /// Accepted links closed at once for the caps.
    private(set) var refusedUnproven = 0
    /// Accepts that failed for want of descriptors.
    private(set) var exhaustedAccepts = 0

    private var links: [ObjectIdentifier: Link] = [:]
    /// Datagram tokens of handshaken links, to the link.
    private var tokens: [UInt64: Link] = [:]
    /// The token each handshaken link was registered with: its machine forgets it once it closes (a link dropped for
    /// silence, or left), before its channel's close removes it here.
    private var tokenOfLink: [ObjectIdentifier: UInt64] = [:]

    init(maxUnproven: Int, maxUnprovenPerAddress: Int) {
        self.maxUnproven = maxUnproven
        self.maxUnprovenPerAddress = maxUnprovenPerAddress
    }

    /// Every link, open or closing.
    var all: Dictionary<ObjectIdentifier, Link>.Values { links.values }

    var isEmpty: Bool { links.isEmpty }

    /// The entries of its tables, by name (``Session/tableSizes()``).
    var tableSizes: [String: Int] {
        ["links": links.count, "linkTokens": tokens.count, "linkTokenOwners": tokenOfLink.count]
    }

    func add(_ link: Link) {
        links[ObjectIdentifier(link)] = link
    }

    /// Forgets `link` (its channel closed), with the token it was registered with, whatever its machine says now.
    func remove(_ link: Link) {
        let id = ObjectIdentifier(link)
        links[id] = nil
        if let token = tokenOfLink.removeValue(forKey: id), tokens[token] === link { tokens[token] = nil }
    }

    /// A datagram token no link has.
    func newToken() -> UInt64 {
        var token: UInt64 = 0
        repeat { token = UInt64.random(in: 1...UInt64.max) } while tokens[token] != nil
        return token
    }

    /// `link` is handshaken: its datagrams carry `token`.
    func register(token: UInt64, for link: Link) {
        let id = ObjectIdentifier(link)
        if let earlier = tokenOfLink[id], earlier != token, tokens[earlier] === link { tokens[earlier] = nil }
        tokens[token] = link
        tokenOfLink[id] = token
    }

    /// The link whose datagrams carry `token`.
    func link(forToken token: UInt64) -> Link? {
        tokens[token]
    }

    // MARK: - Links that have not proved themselves

    /// Why a newly accepted link is over the caps on links that have not proved themselves (counted as refused); nil
    /// when it is not.
    func refusal(forAccepted link: Link) -> String? {
        let address = link.channel.remoteAddress?.ipAddress
        var total = 0
        var fromAddress = 0
        for other in links.values where other !== link && other.role == .acceptor && other.isOpen {
            guard other.machine.isUnproven else { continue }
            total += 1
            if address != nil, other.channel.remoteAddress?.ipAddress == address { fromAddress += 1 }
        }
        let refusal: String
        if total >= maxUnproven {
            refusal = "\(total) links have not proved themselves yet (limit \(maxUnproven))"
        } else if fromAddress >= maxUnprovenPerAddress {
            refusal =
                "\(fromAddress) links from \(address ?? "?") have not proved themselves yet (limit \(maxUnprovenPerAddress))"
        } else {
            return nil
        }
        refusedUnproven += 1
        return refusal
    }

    /// Accept failed for want of descriptors: the oldest accepted link that has not proved itself, to close so that the
    /// next accept succeeds (counted as refused); nil when there is none.
    func oldestUnprovenForExhaustion() -> Link? {
        exhaustedAccepts += 1
        let oldest = links.values.filter { $0.role == .acceptor && $0.isOpen && $0.machine.isUnproven }
            .min { $0.openedAt < $1.openedAt }
        if oldest != nil { refusedUnproven += 1 }
        return oldest
    }

    /// Whether a link other than `link`, on `path`, is in its handshake and may turn out to be `peer`'s.
    func hasHandshakeUnderWay(on path: PathKey, for peer: PeerID, besides link: Link) -> Bool {
        links.values.contains {
            $0 !== link && $0.isOpen && $0.path == path && $0.peerID == nil
                && ($0.intendedPeer == nil || $0.intendedPeer == peer)
        }
    }
}
