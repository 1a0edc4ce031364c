import CMalloc
import Logging
import ServiceLifecycle

/// Gives the memory the daemon freed back to the system, once a minute (`malloc_trim(3)`).
///
/// glibc keeps what a program frees in its arenas, one per thread that allocated (an event loop's, the thread pool's),
/// and returns only the free space at the top of each. A daemon whose links, transfers and peers come and go for days
/// frees buffers of every size from several threads, and the free pages left between the ones still in use would stay
/// resident: the live heap stays flat while the resident memory creeps up. Trimming every arena returns those pages.
struct MemoryTrimmer: Service {
    /// Time between two trims.
    let interval: Duration
    let logger: Logger

    init(interval: Duration = .seconds(60), logger: Logger) {
        self.interval = interval
        self.logger = logger
    }

    func run() async throws {
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                try await gracefulShutdownSleep(for: interval)
            } catch {
                return
            }
            let released = malloc_trim(0) != 0
            logger.trace("memory trimmed", metadata: ["released": "\(released)"])
        }
    }

    /// Sleeps for `duration`, or throws once graceful shutdown begins (or the task is cancelled).
    private func gracefulShutdownSleep(for duration: Duration) async throws {
        try await cancelWhenGracefulShutdown {
            try await Task.sleep(for: duration)
        }
    }
}
