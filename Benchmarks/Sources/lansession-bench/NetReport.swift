import Foundation

/// The figures of `net`: each row's percentiles per placement, the median over the rounds, as a table, JSON lines or
/// an SVG of the distributions (scripts/lib/latency-svg.py).
struct NetReport {
    /// One row's round trips in one round and placement (microseconds).
    struct Sample {
        var row: String
        var placement: Placement
        var p50: Double
        var p90: Double
        var p99: Double
    }

    /// Per row and placement, in the order first measured: the median of each percentile over the rounds.
    let medians: [Sample]
    let size: Int
    let rounds: Int
    let count: Int

    init(samples: [Sample], size: Int, rounds: Int, count: Int) {
        var keys: [String] = []
        var grouped: [String: [Sample]] = [:]
        for sample in samples {
            let key = sample.row + " " + sample.placement.rawValue
            if grouped[key] == nil { keys.append(key) }
            grouped[key, default: []].append(sample)
        }
        medians = keys.map { key in
            let group = grouped[key]!
            return Sample(
                row: group[0].row, placement: group[0].placement, p50: Self.median(group.map(\.p50)),
                p90: Self.median(group.map(\.p90)), p99: Self.median(group.map(\.p99)))
        }
        self.size = size
        self.rounds = rounds
        self.count = count
    }

    /// The middle value, or the mean of the two middle ones (as Python's statistics.median).
    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    private var placements: [Placement] {
        medians.map(\.placement).reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
    }

    private static let table = BenchTable([
        .init("ROW", key: "row", width: 22, .text), .init("P50", key: "p50", width: 8),
        .init("P90", key: "p90", width: 8), .init("P99", key: "p99", width: 8),
        .init("vs TCP", key: "p50_vs_sockperf_tcp", width: 7, .decimals(2)),
        .init("vs ENET", key: "p50_vs_enet_reliable", width: 8, .decimals(2)),
    ])

    /// Each row of `placement` with its p50 ratios to sockperf TCP and ENet reliable in the same placement (rounded to
    /// two decimals for JSON; the table rounds as it prints).
    func rows(_ placement: Placement, roundedRatios: Bool = true) -> [BenchRow] {
        let ratio = { (value: Double) in roundedRatios ? BenchValue.rounded(value, 2) : .number(value) }
        let here = medians.filter { $0.placement == placement }
        let tcp = here.first { $0.row == "sockperf-tcp" }?.p50 ?? .nan
        let enet = here.first { $0.row == "enet-reliable" }?.p50 ?? .nan
        return here.map { sample in
            BenchRow([
                "metric": "round_trip_us", "row": .string(sample.row), "placement": .string(placement.rawValue),
                "size": .integer(size), "rounds": .integer(rounds), "count": .integer(count),
                "p50": .number(sample.p50), "p90": .number(sample.p90), "p99": .number(sample.p99),
                "p50_vs_sockperf_tcp": ratio(sample.p50 / tcp), "p50_vs_enet_reliable": ratio(sample.p50 / enet),
            ])
        }
    }

    func print(_ output: OutputOptions) {
        output.text(
            "round trips of \(size)-byte messages between two test hosts, \(count) per row, median of \(rounds) "
                + "interleaved rounds (µs); split: host 1 on CPU 0, host 2 on CPU 1; same: both on CPU 0")
        for placement in placements {
            output.text("\n\(placement.rawValue):")
            output.header(Self.table)
            for row in rows(placement, roundedRatios: output.json) {
                output.emit(row, in: Self.table)
            }
        }
    }

    /// The rows as latency distributions in a standalone SVG (scripts/lib/latency-svg.py reads them as JSON lines).
    func drawSVG(_ path: String) throws {
        let single = placements.count == 1
        let lines = medians.map { sample in
            BenchRow([
                "row": .string(single ? sample.row : "\(sample.row) (\(sample.placement.rawValue))"),
                "p50": .number(sample.p50), "p90": .number(sample.p90), "p99": .number(sample.p99),
            ]).jsonLine + "\n"
        }
        let input = try Repository.scratchDirectory("net-svg")
        defer { try? FileManager.default.removeItem(atPath: input) }
        try lines.joined().write(toFile: input + "/rows.jsonl", atomically: true, encoding: .utf8)
        let draw = Subprocess(
            [
                "python3", Repository.path("scripts/lib/latency-svg.py"),
                "round trips of \(size)-byte messages between two test hosts", path,
            ], stdin: input + "/rows.jsonl")
        try draw.start()
        try draw.wait()
    }
}
