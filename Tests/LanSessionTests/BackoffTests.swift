import Testing

@testable import LanSession

@Suite("Backoff")
struct BackoffTests {
    @Test("doubles from the initial delay and stops at the cap")
    func doubles() {
        var backoff = Backoff(initial: .milliseconds(100), maximum: .seconds(5), jitter: 0)
        let delays = (0..<10).map { _ in backoff.nextDelay(random: 0) }
        #expect(
            delays == [100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000, 5000].map { Duration.milliseconds($0) })
    }

    @Test("jitter adds at most its fraction and never passes the cap")
    func jitter() {
        var backoff = Backoff(initial: .milliseconds(100), maximum: .seconds(5), jitter: 0.5)
        #expect(backoff.nextDelay(random: 0.999) < .milliseconds(150))
        #expect(backoff.nextDelay(random: 0.5) == .milliseconds(250))
        for _ in 0..<20 { #expect(backoff.nextDelay(random: 0.999) <= .seconds(5)) }
    }

    @Test("a success starts over")
    func reset() {
        var backoff = Backoff(jitter: 0)
        _ = backoff.nextDelay(random: 0)
        _ = backoff.nextDelay(random: 0)
        backoff.reset()
        #expect(backoff.nextDelay(random: 0) == .milliseconds(100))
    }
}
