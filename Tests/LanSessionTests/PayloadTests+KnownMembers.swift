import Foundation
import TestSupport
import Testing
import WireCodec

@testable import LanSession

extension PayloadTests {
    @Suite("Members known from before a restart", .serialized)
    struct KnownMembers {
        /// A file for a session's members, in a fresh directory.
        static func membersFile() throws -> String {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "members-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return directory.appendingPathComponent("members.json").path
        }

        @Test("after a restart, data to a member known before is taken at once and arrives once it is back")
        func sendToAMemberKnownBeforeTheRestart() async throws {
            let file = try Self.membersFile()
            let keep: (inout SessionConfiguration) -> Void = { $0.membersFile = file }
            let a = try makeSession(1, configure: keep)
            let b = try makeSession(2)
            let eventsB = EventRecorder(b)
            try await mesh([a, b])
            #expect(try await waitUntil { try await a.connectedPeers().count == 1 })
            #expect(
                await waitUntil { MembersStore(path: file).load().map(\.id) == [b.peerID] },
                "the member is kept in the file")
            await a.stop()

            let restarted = try makeSession(1, configure: keep)
            try await restarted.start()
            // Before any link: b is a member, away, and what goes to it waits for it.
            let known = try await restarted.peers().first { $0.peerID == b.peerID }
            #expect(known?.name == "peer-2")
            #expect(known?.state == .lost)
            try await restarted.send(Array("taken at once".utf8), to: [b.peerID])
            try await restarted.connect(to: await b.endpoint)
            #expect(await eventsB.wait { PayloadTests.payloads($0).contains(Array("taken at once".utf8)) })
            try await restarted.send(Array("after".utf8), to: [b.peerID])
            #expect(await eventsB.wait { PayloadTests.payloads($0).last == Array("after".utf8) })
            #expect(PayloadTests.payloads(eventsB.events) == [Array("taken at once".utf8), Array("after".utf8)])

            // A session that keeps no members refuses a peer it never saw, as before.
            let forgetful = try makeSession(3)
            try await forgetful.start()
            await #expect(throws: SessionError.self) { try await forgetful.send([1], to: [b.peerID]) }
            await stopAll([restarted, b, forgetful])
        }

        @Test("a member that leaves is no longer kept; a file that cannot be read is left aside")
        func leaversAreForgotten() async throws {
            let file = try Self.membersFile()
            try Data("not json".utf8).write(to: URL(fileURLWithPath: file))
            let a = try makeSession(1) { $0.membersFile = file }
            let b = try makeSession(2)
            let eventsA = EventRecorder(a)
            try await mesh([a, b])
            #expect(await waitUntil { MembersStore(path: file).load().map(\.id) == [b.peerID] })
            await b.stop()  // says bye: it leaves the session
            #expect(await eventsA.wait { $0.contains { if case .peerLeft = $0 { true } else { false } } })
            #expect(await waitUntil { MembersStore(path: file).load().isEmpty }, "the leaver is forgotten")
            await a.stop()
        }
    }
}
