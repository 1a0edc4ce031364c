import Histogram

/// Times round trips one after another from an async caller and records them in an HDR histogram.
///
/// Every row is measured the same way: `warmUp` round trips that are not recorded, then `count` timed ones, each
/// started only when the previous one is back. A sample is the `ContinuousClock` time around one
/// `try await roundTrip()`, taken on the Swift concurrency thread that runs the measuring task, so it includes:
/// the hop onto the client's event loop (enqueueing the task and, if the loop sleeps, waking it); the round trip's
/// promise and timeout bookkeeping; writing and flushing the request (one `write`/`sendmsg` system call); the trip
/// through the kernel's loopback interface; the answering side's wake-up, read, answer and write on the other event
/// loop; the client's wake-up and read; completing the promise; resuming the awaiting task; and the two clock reads.
/// It excludes the warm-up, setting up and tearing down the sockets or sessions, waiting for sessions to connect,
/// and recording the sample. What each row does inside its round trip is described on `RawTCPPingPong`,
/// `RawUDPPingPong` and `SessionPair`.
enum LatencyMeter {
    /// Round trips made before timing starts.
    static let warmUp = 1_000

    /// Samples above this (in nanoseconds) cannot be recorded; every round trip times out long before.
    static let highestTrackable: UInt64 = 60_000_000_000

    /// Makes `warmUp` untimed round trips, then `count` timed ones; returns the samples in nanoseconds.
    static func measure(
        count: Int, _ roundTrip: @Sendable () async throws -> Void
    ) async throws -> Histogram<UInt64> {
        for _ in 0..<warmUp {
            try await roundTrip()
        }
        var histogram = Histogram<UInt64>(
            lowestDiscernibleValue: 1, highestTrackableValue: highestTrackable, numberOfSignificantValueDigits: .three)
        let clock = ContinuousClock()
        for _ in 0..<count {
            let start = clock.now
            try await roundTrip()
            let elapsed = start.duration(to: clock.now)
            let (seconds, attoseconds) = elapsed.components
            let nanoseconds = UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
            guard histogram.record(nanoseconds) else {
                throw BenchError("a round trip took \(elapsed), more than the histogram can record")
            }
        }
        return histogram
    }
}
