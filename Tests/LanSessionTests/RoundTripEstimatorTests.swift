import NIOCore
import Testing
import WireCodec

@testable import LanSession

/// The round-trip estimate, sample by sample, as TCP keeps it.
@Suite("RoundTripEstimator")
struct RoundTripEstimatorTests {
    @Test("smooths samples the way TCP does")
    func smoothing() {
        var estimator = RoundTripEstimator()
        #expect(estimator.smoothed == nil)
        estimator.add(.microseconds(800))
        #expect(estimator.smoothed == .microseconds(800))
        for _ in 0..<50 { estimator.add(.microseconds(100)) }
        #expect(estimator.last == .microseconds(100))
        #expect(estimator.smoothed! < .microseconds(110))
        #expect(estimator.samples == 51)
        estimator.add(.microseconds(-5))
        #expect(estimator.last == .zero)
    }
}
