import ArgumentParser

/// How the two ends of a round trip are pinned to CPUs (`net --placement`).
enum Placement: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// Host 1's end on CPU 0, host 2's on CPU 1.
    case split
    /// Both ends on CPU 0.
    case same
    /// Each round in both placements.
    case both

    /// The placements a run measures, in order.
    var measured: [Placement] { self == .both ? [.split, .same] : [self] }

    /// The CPUs of host 1's end and host 2's end.
    var cpus: (Int, Int) { self == .split ? (0, 1) : (0, 0) }
}
