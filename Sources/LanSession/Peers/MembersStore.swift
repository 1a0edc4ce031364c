import Foundation
import WireCodec

/// Keeps the members a session last saw in a file (JSON), replaced atomically when the set changes, so that a
/// restarted session knows them at once: sends to them wait for them (up to the delivery timeout) instead of being
/// refused until they reconnect. The file is a memory, not a configuration: one that cannot be read is left aside.
struct MembersStore {
    /// A member as the file keeps it.
    struct Member: Hashable, Codable {
        var peerID: String
        var name: String
    }

    private struct Stored: Codable {
        var format = 1
        var members: [Member]
    }

    let path: String

    /// The members kept in the file, by peer id; none when there is no file or it cannot be read.
    func load() -> [(id: PeerID, name: String)] {
        guard let data = FileManager.default.contents(atPath: path),
            let stored = try? JSONDecoder().decode(Stored.self, from: data)
        else { return [] }
        return stored.members.compactMap { member in PeerID(hex: member.peerID).map { ($0, member.name) } }
    }

    /// Replaces the file with `members` (sorted by peer id).
    func save(_ members: [Member]) throws(SessionError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(Stored(members: members.sorted { $0.peerID < $1.peerID }))
        } catch {
            throw SessionError(.invalidConfiguration, "cannot encode the members: \(error)")
        }
        try AtomicFile.write(Array(data), to: path)
    }
}
