import Foundation
import LanSession
import TestSupport
import Testing
import WireCodec

/// A peer id kept in a state directory across restarts.
@Suite("Persistent peer ids")
struct PersistentPeerIDTests {
    @Test("the same directory gives the same peer id; a garbled file is refused, not replaced")
    func persistent() throws {
        let directory =
            FileManager.default.temporaryDirectory.path + "/peer-id-test-\(UInt64.random(in: 1...UInt64.max))"
        defer { _ = try? FileManager.default.removeItem(atPath: directory) }
        let first = try PeerID.persistent(in: directory)
        #expect(try PeerID.persistent(in: directory) == first)
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: directory + "/peer-id"))
        #expect(throws: SessionError.self) { try PeerID.persistent(in: directory) }
        #expect(try String(contentsOfFile: directory + "/peer-id", encoding: .utf8) == "garbage")
    }
}
