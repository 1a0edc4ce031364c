import Crypto
import Foundation
import NIOCore
import Synchronization
import TestSupport
import Testing
import WireCodec

@testable import LanSession

/// Applications' payloads over loopback: data, byte streams and resources, and events for many readers. Its suites,
/// one per kind of payload, run one test at a time.
@Suite("Data, streams and resources over loopback", .serialized)
struct PayloadTests {
    /// Two connected sessions; `b` takes resources into a fresh inbox, its writes held where `gate` says.
    static func pair(inbox: Bool = true, gate: InboxGate? = nil) async throws -> (Session, Session, String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("inbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let a = try makeSession(1)
        let b = try makeSession(2, inbox: inbox ? directory.path : nil) { $0.inboxGate = gate }
        try await mesh([a, b])
        #expect(
            try await waitUntil {
                let fromA = try await a.connectedPeers().count
                let fromB = try await b.connectedPeers().count
                return fromA == 1 && fromB == 1
            })
        return (a, b, directory.path)
    }

    /// The bytes of the reliable data among `events`, in order.
    static func payloads(_ events: [SessionEvent]) -> [[UInt8]] {
        events.compactMap { if case .data(_, let bytes, true) = $0 { Array(bytes.readableBytesView) } else { nil } }
    }

    /// A file of `size` pseudo-random bytes made from `seed`, in the temporary directory, and its SHA-256 (hex).
    static func file(size: Int, seed: UInt64) throws -> (path: String, sha256: String) {
        var generator = SplitMix64(seed: seed)
        var bytes = [UInt8](repeating: 0, count: size)
        for index in stride(from: 0, to: size, by: 8) {
            var value = generator.next()
            for offset in index..<min(index + 8, size) {
                bytes[offset] = UInt8(truncatingIfNeeded: value)
                value >>= 8
            }
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("payload-\(UUID().uuidString).bin")
        try Data(bytes).write(to: path)
        return (path.path, SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined())
    }

    /// The SHA-256 (hex) of the file at `path`.
    static func sha256(of path: String) throws -> String {
        SHA256.hash(data: try Data(contentsOf: URL(fileURLWithPath: path))).map { String(format: "%02x", $0) }.joined()
    }
}
