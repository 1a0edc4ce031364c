import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The threads that open, read, hash, write and sync the files of resource transfers: a pool of their own, whose
/// threads run at a lower scheduling priority than the event loops (nice + ``niceness``).
///
/// A file moving at full speed keeps its threads busy hashing. Where CPUs are fewer than the busy threads (two daemons
/// and their file threads on two CPUs), the kernel then gives the loops the CPU first: a ping, a bubble's move or an
/// acknowledgement is read and answered at once instead of waiting for the scheduler's next turn, and the transfer
/// itself flows better, since its own records and acknowledgements are the loops' work too. With CPUs to spare the
/// priority changes nothing. Other blocking work (the counter's saves) stays on `NIOThreadPool.singleton`, at the
/// normal priority.
enum FileThreads {
    /// How much lower than normal the pool's threads run (`setpriority(2)`; a lower priority needs no privilege).
    static let niceness: Int32 = 10

    /// The pool: one thread per CPU, started on first use and kept for the life of the process (as NIO's singletons).
    static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: max(2, System.coreCount))
        pool.start()
        return pool
    }()

    /// Runs `body` on the pool; its result comes back on `loop`.
    static func run<T: Sendable>(
        on loop: any EventLoop, _ body: @escaping @Sendable () throws -> T
    ) -> EventLoopFuture<T> {
        pool.runIfActive(eventLoop: loop) { () throws -> T in
            lowerPriority()
            return try body()
        }
    }

    /// Runs `body` on the pool and waits for it.
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.runIfActive { () throws -> T in
            lowerPriority()
            return try body()
        }
    }

    /// Gives the calling thread (only that thread, on Linux) the pool's priority, unless it runs lower already (a
    /// process started with `nice` keeps its own). It runs before each piece of work (a block of a file) rather than
    /// relying on which thread ran what; after the first, it is one system call.
    private static func lowerPriority() {
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        guard getpriority(which, 0) < niceness else { return }
        _ = setpriority(which, 0, niceness)
    }
}
