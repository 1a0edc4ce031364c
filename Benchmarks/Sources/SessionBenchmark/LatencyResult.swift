import Foundation
import Histogram

/// The round-trip times of one row, recorded in nanoseconds, and their printed forms.
struct LatencyResult {
    /// The row's name, e.g. "session-reliable".
    let name: String
    /// "lan" for sessions, "loopback-raw" for the plain SwiftNIO baselines.
    let transport: String
    /// "reliable" or "unreliable".
    let channel: String
    /// Bytes of the raw baselines' message (3), given for the session rows too, which they are compared with.
    ///
    /// A session's ping is bigger on the wire: a frame of about 9 bytes (length, kind, nonce and timestamp varints)
    /// on the TCP link, and about 19 in a datagram (link token and sequence number in front).
    let size: Int
    /// The timed round trips, in nanoseconds.
    let histogram: Histogram<UInt64>

    /// How many round trips were timed.
    var count: UInt64 { histogram.totalCount }

    /// The median, in nanoseconds.
    var medianNanoseconds: UInt64 { histogram.valueAtPercentile(50) }

    /// The statistics printed for the row, in microseconds with one decimal, in column order.
    var microseconds: [(key: String, value: String)] {
        [
            ("p50_us", Self.format(histogram.valueAtPercentile(50))),
            ("p90_us", Self.format(histogram.valueAtPercentile(90))),
            ("p99_us", Self.format(histogram.valueAtPercentile(99))),
            ("max_us", Self.format(histogram.maxRecorded)),
            ("mean_us", String(format: "%.1f", histogram.mean / 1_000)),
        ]
    }

    /// The row as one JSON object on one line; keys in a fixed order.
    var jsonLine: String {
        let fields =
            [
                "\"metric\": \"round_trip_us\"", "\"name\": \"\(name)\"", "\"transport\": \"\(transport)\"",
                "\"channel\": \"\(channel)\"",
            ]
            + ["\"count\": \(count)", "\"size\": \(size)"]
            + microseconds.map { "\"\($0.key)\": \($0.value)" }
        return "{" + fields.joined(separator: ", ") + "}"
    }

    /// The row's cells in table order: transport, channel, count and the statistics.
    var tableCells: [String] {
        [name, transport, channel, String(count)] + microseconds.map(\.value)
    }

    /// The table's header, matching ``tableCells``.
    static let tableHeader = [
        "row", "transport", "channel", "count", "p50_us", "p90_us", "p99_us", "max_us", "mean_us",
    ]

    private static func format(_ nanoseconds: UInt64) -> String {
        String(format: "%.1f", Double(nanoseconds) / 1_000)
    }
}
