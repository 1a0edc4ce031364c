import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Tells the drivers to stop.
final class StopFlag: Sendable {
    private let flag = Atomic(false)
    var isRaised: Bool { flag.load(ordering: .relaxed) }
    func raise() { flag.store(true, ordering: .relaxed) }

    /// Sleeps `milliseconds`, or less once the flag is raised; true when it was not.
    func pause(milliseconds: Int) -> Bool {
        var left = milliseconds
        while left > 0 && !isRaised {
            usleep(UInt32(min(left, 100) * 1000))
            left -= 100
        }
        return !isRaised
    }
}
