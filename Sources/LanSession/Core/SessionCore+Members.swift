import NIOCore
import WireCodec

/// Membership exchange: connected peers tell each other whom they are connected to and where, so that any connected
/// start — a chain of static peers, peers that see only part of the multicast — ends as a full mesh with one layout.
extension SessionCore {
    /// Records of endpoints heard in `members` are named after the sender and the member.
    static let memberRecordPrefix = "member "

    static func memberRecord(from sender: PeerID, about member: PeerID) -> String {
        "\(memberRecordPrefix)\(sender) \(member)"
    }

    /// What this peer would say in `members` may have changed: send it again at the next exchange.
    func membersChanged() {
        membersVersion &+= 1
    }

    /// The members to tell `recipient` about: every other connected peer, with the endpoints handshakes proved.
    func members(for recipient: PeerRecord) -> [Member] {
        peers.values.filter { $0.isConnected && $0.id != recipient.id }
            .sorted { $0.id < $1.id }
            .prefix(Wire.maxMembers)
            .map { peer in
                let endpoints = peer.lastSucceeded.sorted { $0.value > $1.value }.map(\.key).compactMap {
                    endpoint -> MemberEndpoint? in
                    guard endpoint.transport.utf8.count <= Wire.maxTransportNameLength,
                        endpoint.host.utf8.count <= Wire.maxHostLength, let port = UInt16(exactly: endpoint.port)
                    else { return nil }
                    return MemberEndpoint(transport: endpoint.transport, host: endpoint.host, port: port)
                }
                return Member(
                    peerID: peer.id, displayName: Self.truncated(peer.name, to: Wire.maxNameLength),
                    endpoints: Array(endpoints.prefix(Wire.maxMemberEndpoints)))
            }
    }

    /// Sends `members` to every connected peer whose last one is out of date, at most once per interval.
    func exchangeMembers(now: NIODeadline) {
        guard now - lastMembersExchange >= configuration.membersExchangeInterval.timeAmount else { return }
        lastMembersExchange = now
        for peer in peers.values where peer.isConnected && membersSent[peer.id] != membersVersion {
            guard let link = peer.active ?? peer.handshakenLinks.first else { continue }
            write(.members(members(for: peer)), on: link)
            membersSent[peer.id] = membersVersion
        }
    }

    /// `peer` says whom it is connected to: each member's endpoints become a record to dial, replacing what `peer`
    /// said before; members it no longer names take their records with them.
    func receivedMembers(_ members: [Member], from peer: PeerRecord) {
        var named = Set<PeerID>()
        for member in members where member.peerID != localPeer && member.peerID != peer.id {
            named.insert(member.peerID)
            let endpoints = member.endpoints.map {
                Endpoint(transport: $0.transport, host: $0.host, port: Int($0.port))
            }
            addDiscovered(
                endpoints, peer: member.peerID, name: member.displayName,
                record: Self.memberRecord(from: peer.id, about: member.peerID))
        }
        for gone in memberRecords[peer.id, default: []].subtracting(named) {
            removeDiscovered(record: Self.memberRecord(from: peer.id, about: gone))
        }
        memberRecords[peer.id] = named
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

extension SessionCore {
    /// Leaves `id`: says bye on each of its links, stops redialling it, ends the streams with it. It comes back when
    /// it shows up anew (a new discovery record) or is connected to again.
    func disconnect(_ id: PeerID) throws(SessionError) {
        guard let peer = peers[id] else { throw noSuchMember(id) }
        peer.left = true
        peer.notConnectedReason = .disconnected
        for dial in peer.dials.values { dial.scheduled?.cancel() }
        peer.dials = [:]
        for link in Array(peer.links.values) where link.isOpen {
            perform(link.machine.leave(.leaving), on: link)
        }
        streamsEnded(with: peer, reason: "disconnected")
        publishState(of: peer)
    }
}
