import Foundation
import Synchronization
import TestSupport
import Testing

@testable import LanSession

/// The gate that paces a receiver's disk in tests.
@Suite("InboxGate")
struct InboxGateTests {
    @Test("a write below the offset passes; one at it waits until released, also when the gate holds again at once")
    func holdAndRelease() async throws {
        let gate = InboxGate()
        gate.pass(at: 100)  // open: passes
        gate.hold(from: 1_000)
        gate.pass(at: 999)  // below: passes
        let passed = Flag()
        let writer = Thread {
            gate.pass(at: 1_000)
            passed.set()
        }
        writer.start()
        #expect(await waitUntil { gate.isHolding })
        #expect(!passed.isSet)
        gate.release()
        gate.hold(from: 1_000)  // a new hold does not keep the write held before the release
        #expect(await waitUntil { passed.isSet })
        #expect(!gate.isHolding)
        gate.release()
    }
}

/// A flag one thread sets and another reads.
final class Flag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
