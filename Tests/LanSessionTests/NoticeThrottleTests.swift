import Testing

@testable import LanSession

/// Which repeated notices are passed on.
@Suite("NoticeThrottle")
struct NoticeThrottleTests {
    @Test("the first ten of a kind, then every thousandth, each kind counted apart")
    func throttle() {
        var throttle = NoticeThrottle()
        let reported = (1...3_000).filter { _ in throttle.count(.rejectedLink).report }
        #expect(reported == Array(1...10) + [1_000, 2_000, 3_000])
        #expect(throttle.count(.refusedHandshake) == (1, true))
    }
}
