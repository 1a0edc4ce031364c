import NIOCore
import WireCodec

/// Membership exchange, as a plain value: connected peers tell each other whom they are connected to and where, so
/// that any connected start (a chain of static peers, peers that see only part of the multicast) ends as a full mesh.
///
/// It keeps what it said to each peer and what each peer said; the session sends the `members` it asks for and hands
/// it the ones it receives, and the endpoints they name become discovery records of the dialler.
struct MembersGossip {
    /// A member as this peer tells others about it.
    struct Known {
        var id: PeerID
        var name: String
        /// Where a handshake proved it, most recent first.
        var endpoints: [Endpoint]
    }

    /// What a received `members` changes: records to set (a member's endpoints, as heard from the sender), and records
    /// of members the sender no longer names.
    struct Update: Equatable {
        struct Record: Equatable {
            var name: String
            var peer: PeerID
            var displayName: String
            var endpoints: [Endpoint]
        }
        var set: [Record] = []
        var withdrawn: [String] = []
    }

    /// Records of endpoints heard in `members` start with this.
    static let recordPrefix = "member "

    let interval: TimeAmount
    /// Bumped whenever what this peer would say in `members` may have changed.
    private var version: UInt64 = 0
    /// Per peer: the version last sent to it.
    private var sent: [PeerID: UInt64] = [:]
    private var lastExchange: NIODeadline
    /// Per peer that sent `members`: the members it named, for withdrawing the ones it stops naming.
    private var heard: [PeerID: Set<PeerID>] = [:]

    /// The entries of its tables, by name: the peers told, and those heard from.
    var tableSizes: [String: Int] { ["membersTold": sent.count, "membersHeard": heard.count] }

    init(interval: TimeAmount, now: NIODeadline) {
        self.interval = interval
        self.lastExchange = now
    }

    /// The name of the record of `member`'s endpoints as `sender` tells them.
    static func record(from sender: PeerID, about member: PeerID) -> String {
        "\(recordPrefix)\(sender) \(member)"
    }

    /// What this peer would say in `members` may have changed: it says it again at the next exchange.
    mutating func changed() {
        version &+= 1
    }

    /// Whether an exchange is due at `now` (at most one per interval); it counts as done.
    mutating func exchangeDue(at now: NIODeadline) -> Bool {
        guard now - lastExchange >= interval else { return false }
        lastExchange = now
        return true
    }

    /// Whether `peer` was last told an older `members` than this peer would say now.
    func isOutdated(_ peer: PeerID) -> Bool {
        sent[peer] != version
    }

    /// `peer` was told what this peer would say now.
    mutating func told(_ peer: PeerID) {
        sent[peer] = version
    }

    /// The `members` to tell `recipient`: every other connected peer, sorted by id, within the wire's limits.
    static func members(for recipient: PeerID, among connected: [Known]) -> [Member] {
        connected.lazy.filter { $0.id != recipient }.prefix(Wire.maxMembers).map { known in
            let endpoints = known.endpoints.compactMap { endpoint -> MemberEndpoint? in
                guard endpoint.transport.utf8.count <= Wire.maxTransportNameLength,
                    endpoint.host.utf8.count <= Wire.maxHostLength, let port = UInt16(exactly: endpoint.port)
                else { return nil }
                return MemberEndpoint(transport: endpoint.transport, host: endpoint.host, port: port)
            }
            return Member(
                peerID: known.id, displayName: truncated(known.name, to: Wire.maxNameLength),
                endpoints: Array(endpoints.prefix(Wire.maxMemberEndpoints)))
        }
    }

    /// `sender` says whom it is connected to: each member's endpoints become a record, replacing what `sender` said
    /// before; members it no longer names take their records with them. This peer and the sender are skipped.
    mutating func received(_ members: [Member], from sender: PeerID, local: PeerID) -> Update {
        var update = Update()
        var named = Set<PeerID>()
        for member in members where member.peerID != local && member.peerID != sender {
            named.insert(member.peerID)
            update.set.append(
                Update.Record(
                    name: Self.record(from: sender, about: member.peerID), peer: member.peerID,
                    displayName: member.displayName,
                    endpoints: member.endpoints.map {
                        Endpoint(transport: $0.transport, host: $0.host, port: Int($0.port))
                    }))
        }
        for gone in heard[sender, default: []].subtracting(named).sorted() {
            update.withdrawn.append(Self.record(from: sender, about: gone))
        }
        heard[sender] = named
        return update
    }

    /// Forgets `peer` (it is forgotten by the session).
    mutating func forget(_ peer: PeerID) {
        heard[peer] = nil
        sent[peer] = nil
    }

    /// `text` cut to at most `limit` UTF-8 bytes, on a character boundary.
    static func truncated(_ text: String, to limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        var result = ""
        for character in text {
            guard result.utf8.count + String(character).utf8.count <= limit else { break }
            result.append(character)
        }
        return result
    }
}
