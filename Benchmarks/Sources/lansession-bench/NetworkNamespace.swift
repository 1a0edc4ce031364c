import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs code in another network namespace (a test host's, the lab's switch) on a thread of its own: `setns` moves
/// only the calling thread, and a socket keeps the namespace it was made in, whichever thread uses it later. The rest
/// of this process stays where it is.
enum NetworkNamespace {
    /// Runs `body` on a new thread that has entered the network namespace at `path` (/proc/PID/ns/net or
    /// /run/netns/NAME), and waits for it.
    static func run<Result: Sendable>(
        at path: String, _ body: @escaping @Sendable () throws -> Result
    ) throws -> Result {
        let outcome = Mutex<Swift.Result<Result, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        start(at: path) { entered in
            outcome.withLock { $0 = entered.flatMap { Swift.Result { try body() } } }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }

    /// Starts a thread in the network namespace at `path` and runs `body` there without waiting; `body` gets a
    /// failure instead when the namespace could not be entered.
    static func start(at path: String, _ body: @escaping @Sendable (Swift.Result<Void, any Error>) -> Void) {
        let thread = Thread {
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                body(.failure(BenchFailure("cannot open \(path): \(String(cString: strerror(errno)))")))
                return
            }
            defer { close(fd) }
            guard let setns = Self.setns, setns(fd, Self.newNetworkNamespace) == 0 else {
                body(.failure(BenchFailure("cannot enter \(path): \(String(cString: strerror(errno)))")))
                return
            }
            body(.success(()))
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// CLONE_NEWNET (linux/sched.h).
    private static let newNetworkNamespace: Int32 = 0x4000_0000

    /// glibc's setns(2), which its Swift module leaves out (it needs _GNU_SOURCE).
    private static let setns: (@convention(c) (Int32, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setns") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
    }()
}
