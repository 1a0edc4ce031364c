#if canImport(Glibc)
    import Glibc
#endif

/// The pids of the processes this process started detached (holders, daemons, reapers), so that it collects their
/// exit once a lab ended them: in a long-lived process such as a test runner they would stay zombies otherwise, and a
/// teardown waiting for its processes to be gone would wait in vain. Pids it did not start are never waited for (they
/// may be another part's children, whose exit that part collects).
final class DetachedProcesses: @unchecked Sendable {
    static let shared = DetachedProcesses()

    private var lock = pthread_mutex_t()
    private var pids: Set<pid_t> = []

    private init() { pthread_mutex_init(&lock, nil) }

    func add(_ pid: pid_t) {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        pids.insert(pid)
    }

    func reap(_ candidates: [pid_t]) {
        pthread_mutex_lock(&lock)
        defer { pthread_mutex_unlock(&lock) }
        for pid in candidates where pids.contains(pid) {
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid || result < 0 && errno == ECHILD { pids.remove(pid) }
        }
    }
}
