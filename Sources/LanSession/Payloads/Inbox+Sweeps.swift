import Logging
import NIOCore

extension Inbox {
    /// Removes the inbox's partial files older than `lifetime` now and every hour, until the task is cancelled.
    func sweepEveryHour(olderThan lifetime: Duration, on loop: any EventLoop, logger: Logger) -> RepeatedTask {
        loop.scheduleRepeatedTask(initialDelay: .zero, delay: .hours(1)) { _ in
            removePartialFiles(olderThan: lifetime, on: loop).whenSuccess { removed in
                guard !removed.isEmpty else { return }
                logger.debug(
                    "removed \(removed.count) partial files of transfers abandoned for \(lifetime)",
                    metadata: ["inbox": "\(directory)", "files": "\(removed)"])
            }
        }
    }
}
