import NIOCore

extension Duration {
    /// The same span for NIO's timers.
    var timeAmount: TimeAmount {
        let (seconds, attoseconds) = components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// Whole nanoseconds.
    var nanoseconds: Int64 { timeAmount.nanoseconds }
}

extension TimeAmount {
    /// The same span as a `Duration`.
    var duration: Duration { .nanoseconds(nanoseconds) }
}
