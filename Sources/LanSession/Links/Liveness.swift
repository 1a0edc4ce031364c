import NIOCore

/// Heartbeats and silence detection for one link, as a plain value driven with explicit times.
struct Liveness {
    /// Send a ping when nothing was sent for this long.
    let heartbeatInterval: TimeAmount
    /// Declare the link dead when nothing was received for this long.
    let timeout: TimeAmount
    private(set) var lastReceived: NIODeadline
    private(set) var lastSent: NIODeadline

    init(heartbeatInterval: TimeAmount, timeout: TimeAmount, now: NIODeadline) {
        self.heartbeatInterval = heartbeatInterval
        self.timeout = timeout
        self.lastReceived = now
        self.lastSent = now
    }

    mutating func didReceive(at now: NIODeadline) { lastReceived = max(lastReceived, now) }
    mutating func didSend(at now: NIODeadline) { lastSent = max(lastSent, now) }

    enum Verdict: Equatable {
        case alive
        case heartbeatDue
        case dead
    }

    func check(at now: NIODeadline) -> Verdict {
        if now - lastReceived >= timeout { return .dead }
        if now - lastSent >= heartbeatInterval { return .heartbeatDue }
        return .alive
    }
}

/// Round-trip time estimate in the manner of TCP (RFC 6298): last sample, smoothed mean and variation.
struct RoundTripEstimator: Hashable {
    private(set) var last: TimeAmount?
    private(set) var smoothed: TimeAmount?
    private(set) var variation: TimeAmount = .zero
    private(set) var samples = 0

    mutating func add(_ sample: TimeAmount) {
        let sample = max(sample, .zero)
        samples += 1
        last = sample
        guard let smoothed else {
            self.smoothed = sample
            variation = .nanoseconds(sample.nanoseconds / 2)
            return
        }
        let difference = abs(smoothed.nanoseconds - sample.nanoseconds)
        variation = .nanoseconds((3 * variation.nanoseconds + difference) / 4)
        self.smoothed = .nanoseconds((7 * smoothed.nanoseconds + sample.nanoseconds) / 8)
    }
}
