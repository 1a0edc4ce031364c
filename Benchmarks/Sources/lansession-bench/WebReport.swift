import Foundation

/// What `web` measured: the latency rows (frames at 60 Hz, then unthrottled), the page's CPU row and the daemons'
/// round trip, printed as JSON lines or as a table.
struct WebReport {
    var latency: [BenchRow] = []
    /// The `page_cpu` row's JSON line.
    var cpu: String?
    /// The daemons' `bench` result, as the daemon wrote it.
    var daemons = ""

    func print(json: Bool) {
        if json {
            for row in latency { OutputOptions.write(row.jsonLine) }
            if let cpu { OutputOptions.write(cpu) }
            OutputOptions.write(daemons)
            return
        }
        let write = OutputOptions.write
        let cell = { (row: BenchRow, key: String) in Self.right(row[key]?.json ?? "None") }
        if !latency.isEmpty {
            write(
                Self.left("from a drag on host 1 to the frame on host 2")
                    + ["p50 ms", "p90 ms", "p99 ms", "max ms"].map(Self.right).joined() + "  moves")
        }
        for row in latency {
            let frames = if case .string(let text) = row["frames"] { text } else { "" }
            write(
                Self.left("page to page, frames " + frames)
                    + ["p50_ms", "p90_ms", "p99_ms", "max_ms"].map { cell(row, $0) }.joined()
                    + "  \(row["matched"]?.json ?? "?") of \(row["moves"]?.json ?? "?")")
            write(
                Self.left("  moves after the first of a drag")
                    + ["later_p50_ms", "later_p90_ms", "later_p99_ms"].map { cell(row, $0) }.joined() + Self.right("")
                    + "  (a drag's first move also picks it up)")
            write(
                Self.left("  to its arrival in page 2, before the frame")
                    + ["arrived_p50_ms", "arrived_p90_ms", "arrived_p99_ms", "arrived_max_ms"].map { cell(row, $0) }
                    .joined())
            write(
                Self.left("  the browser: pointer event to its handler")
                    + ["input_lag_p50_ms", "input_lag_p90_ms", "input_lag_p99_ms"].map { cell(row, $0) }.joined())
        }
        let round = (try? JSONSerialization.jsonObject(with: Data(daemons.utf8))) as? [String: Any] ?? [:]
        write(
            Self.left("sessiond reliable round trip, h1 to h2 (16 B)")
                + ["p50_us", "p90_us", "p99_us", "max_us"].map {
                    Self.right(String(format: "%.3f", ((round[$0] as? Double) ?? 0) / 1000))
                }.joined())
        guard let cpu, let figures = (try? JSONSerialization.jsonObject(with: Data(cpu.utf8))) as? [String: Any] else {
            return
        }
        let seconds = Int(figures["seconds"] as? Double ?? 0)
        let rate = String(format: "%g", figures["rate_hz"] as? Double ?? 0)
        write("")
        write(
            Self.left("daemon CPU, % of one CPU, \(seconds) s each")
                + ["no page", "page", "drag", "more"].map(Self.right).joined()
                + "  (\(figures["moves"] as? Int ?? 0) moves at \(rate) Hz)")
        let names = ["h1, serving the page that drags", "h2, its page drawing the drag"]
        for (name, daemon) in zip(names, figures["daemons"] as? [[String: Any]] ?? []) {
            let values = ["no_page_pct", "page_idle_pct", "dragging_pct"].map { daemon[$0] as? Double ?? 0 }
            let more = ((values[2] - values[1]) * 100).rounded() / 100
            write(Self.left(name) + (values + [more]).map { Self.right(BenchValue.number($0).json) }.joined())
        }
    }

    /// `text` in a column of 48, left-aligned.
    private static func left(_ text: String) -> String {
        text + String(repeating: " ", count: max(0, 48 - text.count))
    }

    /// `text` after a space, right-aligned in a column of 8.
    private static func right(_ text: String) -> String {
        " " + String(repeating: " ", count: max(0, 8 - text.count)) + text
    }
}
