import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Pointer event on page 1 to the frame drawn on page 2, over N drags of bubble 2 in two headless Chromium windows,
/// on one clock: the machine's, as performance.timeOrigin + performance.now() in both pages (the page keeps its
/// timings in window.lansessionSent, …Timings, …Arrivals and …InputLag). Also to the move's arrival in page 2 (the
/// pipeline: page, daemon, network, daemon, page), before it waits for page 2's next frame.
struct PageLatency {
    /// A move page 1 sent, and a move page 2 drew or received.
    private struct Sent: Decodable {
        var view: Int
        var x: Double
        var y: Double
        var sentAt: Double
        var first: Bool?
    }

    private struct Seen: Decodable {
        var view: Int
        var x: Double
        var y: Double
        var drawnAt: Double?
        var arrivedAt: Double?
    }

    private struct Taken: Decodable {
        var drawn: [Seen]
        var arrived: [Seen]
    }

    /// chromedriver's port, the two pages, and whether frames are unthrottled (not 60 a second).
    let port: Int
    let pages: (String, String)
    let drags: Int
    let unthrottled: Bool

    /// Opens both pages, waits until both are connected, times the drags: the `latency` row.
    func measure() throws -> BenchRow {
        let flags = unthrottled ? ["--disable-frame-rate-limit", "--disable-gpu-vsync"] : []
        let one = try WebDriver(port: port, arguments: flags)
        defer { one.quit() }
        let two = try WebDriver(port: port, arguments: flags)
        defer { two.quit() }
        try one.open(pages.0)
        try two.open(pages.1)
        let state = "const s = document.getElementById('status'); return s ? s.getAttribute('data-state') : null"
        let connected = Polling.until(500, every: 0.03) {
            (try? one.execute(state) as? String) == "connected" && (try? two.execute(state) as? String) == "connected"
        }
        guard connected else { throw BenchFailure("web: the pages did not connect within 15 s") }
        return try time(one, two)
    }

    private func time(_ one: WebDriver, _ two: WebDriver) throws -> BenchRow {
        try one.execute("window.lansessionSent.length = 0; window.lansessionInputLag.length = 0")
        try two.execute("window.lansessionTimings.length = 0; window.lansessionArrivals.length = 0")
        let take =
            "const d = {drawn: window.lansessionTimings.slice(), arrived: window.lansessionArrivals.slice()}; "
            + "window.lansessionTimings.length = 0; window.lansessionArrivals.length = 0; return d"
        var sent: [Sent] = []
        var drawn: [Seen] = []
        var arrived: [Seen] = []
        for index in 0..<drags {
            let bubble = try one.element(#".bubble[data-view="2"]"#)
            try one.drag(bubble, dx: index % 2 == 0 ? 40 : -40, dy: index % 4 < 2 ? 30 : -30, steps: 10)
            if index % 20 == 19 {  // the pages keep the last 2000 of each; collect as they go
                sent += try one.execute(
                    "const s = window.lansessionSent.slice(); window.lansessionSent.length = 0; return s",
                    as: [Sent].self)
                usleep(200_000)
                let got = try two.execute(take, as: Taken.self)
                drawn += got.drawn
                arrived += got.arrived
            }
        }
        usleep(300_000)
        sent += try one.execute("return window.lansessionSent", as: [Sent].self)
        let got = try two.execute(take, as: Taken.self)
        drawn += got.drawn
        arrived += got.arrived
        let lag = try one.execute("return window.lansessionInputLag", as: [Double].self).sorted()

        let latencies = Self.delays(sent, drawn, \.drawnAt)
        let later = Self.delays(sent.filter { $0.first != true }, drawn, \.drawnAt)
        let arrivals = Self.delays(sent, arrived, \.arrivedAt)
        let p = Self.percentile
        return BenchRow([
            "event": "latency", "drags": .integer(drags), "moves": .integer(sent.count), "drawn": .integer(drawn.count),
            "matched": .integer(latencies.count), "p50_ms": p(latencies, 0.5), "p90_ms": p(latencies, 0.9),
            "p99_ms": p(latencies, 0.99), "max_ms": latencies.last.map { .rounded($0, 2) } ?? .null,
            "arrived_p50_ms": p(arrivals, 0.5), "arrived_p90_ms": p(arrivals, 0.9), "arrived_p99_ms": p(arrivals, 0.99),
            "arrived_max_ms": arrivals.last.map { .rounded($0, 2) } ?? .null, "later_p50_ms": p(later, 0.5),
            "later_p90_ms": p(later, 0.9), "later_p99_ms": p(later, 0.99), "input_lag_p50_ms": p(lag, 0.5),
            "input_lag_p90_ms": p(lag, 0.9), "input_lag_p99_ms": p(lag, 0.99),
            "frames": unthrottled ? "unthrottled" : "60 Hz",
        ])
    }

    /// For each sent move, the time to the first seen one at the same place, no earlier than it was sent; sorted.
    private static func delays(_ sent: [Sent], _ seen: [Seen], _ key: KeyPath<Seen, Double?>) -> [Double] {
        sent.compactMap { move in
            seen.first {
                $0.view == move.view && $0.x == move.x && $0.y == move.y && ($0[keyPath: key] ?? -1) >= move.sentAt
            }
            .flatMap { $0[keyPath: key] }.map { $0 - move.sentAt }
        }.sorted()
    }

    /// The value at fraction `p` of sorted `values`, to 0.01 ms; null without values.
    private static func percentile(_ values: [Double], _ p: Double) -> BenchValue {
        guard !values.isEmpty else { return .null }
        return .rounded(values[min(values.count - 1, Int(p * Double(values.count)))], 2)
    }
}
