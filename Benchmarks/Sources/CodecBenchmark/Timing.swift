/// Where benchmark loops leave their checksums, so the optimizer cannot prove their work unused.
///
/// Only the main thread touches it; `main.swift` prints it to stderr at the end.
nonisolated(unsafe) var benchmarkSink: UInt64 = 0

/// Consumes a value in a way the optimizer cannot see through.
@inline(never)
func blackHole(_ value: UInt64) {
    benchmarkSink &+= value
}

/// Returns `value` through a call the optimizer cannot see through, so it cannot constant-fold fixtures.
@inline(never)
func opaque<T>(_ value: T) -> T {
    value
}

/// Measures how long one operation of a benchmark loop takes.
enum Timing {
    /// How long one timed run should last.
    static let targetRun = Duration.milliseconds(120)
    /// How long the warm-up runs last in total, at least.
    static let warmUp = Duration.milliseconds(20)
    /// Timed runs per measurement; the median is reported.
    static let runs = 5

    /// Median nanoseconds per iteration of `loop`, which must run its operation as many times as it is told.
    ///
    /// Warms up by doubling the iteration count until a run takes `warmUp`, then picks the count that makes a run
    /// last about `targetRun` and times `runs` runs of it.
    static func nanosecondsPerOperation(_ loop: (Int) -> UInt64) -> Double {
        let clock = ContinuousClock()
        var iterations = 1
        var elapsed = Duration.zero
        while true {
            let start = clock.now
            blackHole(loop(iterations))
            elapsed = clock.now - start
            if elapsed >= warmUp { break }
            iterations *= 2
        }
        let scale = nanoseconds(targetRun) / max(nanoseconds(elapsed), 1)
        iterations = max(1, Int((Double(iterations) * scale).rounded()))

        var samples: [Double] = []
        for _ in 0..<runs {
            let start = clock.now
            blackHole(loop(iterations))
            samples.append(nanoseconds(clock.now - start) / Double(iterations))
        }
        samples.sort()
        return samples[samples.count / 2]
    }

    static func nanoseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1e9 + Double(attoseconds) / 1e9
    }
}
