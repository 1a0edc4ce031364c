#if canImport(Glibc)
    import Glibc
#endif

/// Seconds on the monotonic clock, and sleeping, for the waits of a lab's steps (which poll processes and files).
enum Clock {
    /// Now, in seconds since an arbitrary start.
    static var now: Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Sleeps `seconds`.
    static func sleep(_ seconds: Double) {
        usleep(UInt32(seconds * 1_000_000))
    }
}
