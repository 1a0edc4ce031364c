import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs cleanups (a lab's teardown) when SIGINT or SIGTERM arrives, then exits with 128 + the signal's number.
///
/// The signals are ignored by the process and seen by dispatch sources instead; ``Subprocess`` starts children with
/// every signal at its default again.
enum SignalTrap {
    private static let cleanups = Mutex<[Int: @Sendable () -> Void]>([:])
    private static let nextKey = Atomic<Int>(0)
    private static let sources = Mutex<[any DispatchSourceSignal]>([])

    /// Adds a cleanup; the key removes it.
    static func add(_ cleanup: @escaping @Sendable () -> Void) -> Int {
        installOnce()
        let key = nextKey.add(1, ordering: .relaxed).newValue
        cleanups.withLock { $0[key] = cleanup }
        return key
    }

    static func remove(_ key: Int) {
        _ = cleanups.withLock { $0.removeValue(forKey: key) }
    }

    private static func installOnce() {
        sources.withLock { sources in
            guard sources.isEmpty else { return }
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    Repository.note("bench: signal \(number), cleaning up")
                    let pending = cleanups.withLock { cleanups in
                        defer { cleanups.removeAll() }
                        return Array(cleanups.values)
                    }
                    for cleanup in pending { cleanup() }
                    exit(128 + number)
                }
                source.resume()
                sources.append(source)
            }
        }
    }
}
