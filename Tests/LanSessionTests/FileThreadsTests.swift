import NIOPosix
import Testing

@testable import LanSession

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The file threads of transfers run below the event loops' priority, and leave everyone else's alone.
@Suite("FileThreads")
struct FileThreadsTests {
    private static func niceness() -> Int32 { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }

    @Test("work on the file threads runs at the lower priority; the caller and the loops keep theirs")
    func lowerPriority() async throws {
        let callers = Self.niceness()
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let onLoop = try await loop.submit { Self.niceness() }.get()
        for _ in 0..<(2 * FileThreads.pool.numberOfThreads) {
            let onPool = try await FileThreads.run { Self.niceness() }
            #expect(onPool == max(FileThreads.niceness, callers))
        }
        let onPoolFromLoop = try await FileThreads.run(on: loop) { Self.niceness() }.get()
        #expect(onPoolFromLoop == max(FileThreads.niceness, callers))
        #expect(Self.niceness() == callers)
        #expect(try await loop.submit { Self.niceness() }.get() == onLoop)
    }
}
