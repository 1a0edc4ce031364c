/// Exponential backoff for redialling: the first retry after `initial`, each next one twice as late, never later
/// than `maximum`, each with up to `jitter` of its delay added at random so that peers do not redial in lockstep.
struct Backoff: Hashable, Sendable {
    /// Delay before the first retry.
    var initial: Duration
    /// Longest delay.
    var maximum: Duration
    /// Fraction of a delay added at random, 0...1.
    var jitter: Double
    /// Failed attempts since the last success.
    private(set) var failures = 0

    /// Creates a backoff.
    init(initial: Duration = .milliseconds(100), maximum: Duration = .seconds(5), jitter: Double = 0.2) {
        precondition(initial > .zero && maximum >= initial && (0...1).contains(jitter))
        self.initial = initial
        self.maximum = maximum
        self.jitter = jitter
    }

    /// The delay before the next attempt, counting one more failure; `random` is in 0..<1.
    mutating func nextDelay(random: Double) -> Duration {
        let exponent = min(failures, 30)
        failures += 1
        let base = min(initial * (1 << exponent), maximum)
        return min(base + base * (jitter * random), maximum)
    }

    /// The delay before the next attempt, with the system's randomness.
    mutating func nextDelay() -> Duration {
        nextDelay(random: Double.random(in: 0..<1))
    }

    /// Starts over after a success.
    mutating func reset() {
        failures = 0
    }
}
