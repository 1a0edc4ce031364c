import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What a page costs its daemon: CPU of sessiond (by pid, from /proc) while idle without a page, idle with a page
/// open, and while the page drags a bubble at 60 moves a second, as a browser sends them (the page's WebSocket, its
/// token cookie and Origin, binary moves). Another daemon's page is open meanwhile and reads every move, as the other
/// person's screen would. Run on a thread in the network namespace of the host whose page drags.
struct PageDragCPU {
    let page: String
    let otherPage: String
    /// The daemon serving `page`, then the other.
    let daemons: [Int32]
    let seconds: Double
    let rate = 60.0

    /// The `page_cpu` row, as one JSON line (it holds a list of daemons).
    func measure() throws -> String {
        let without = try percent(over: seconds)
        let socket = try PageSocket(url: page)
        let other = try PageSocket(url: otherPage)
        usleep(1_000_000)
        let idle = try percent(over: seconds)
        try socket.sendText(#"{"op": "pickup", "view": 1}"#)
        usleep(500_000)
        var sent = 0
        let dragging = try percent(over: seconds) { sent = try drag(socket) }
        try socket.sendText(#"{"op": "drop", "view": 1, "x": 100, "y": 100}"#)
        usleep(300_000)
        socket.close()
        other.close()
        let row = BenchRow([
            "event": "page_cpu", "seconds": .number(seconds), "rate_hz": .number(rate), "moves": .integer(sent),
            "frames_received": .integer(socket.received),
        ])
        let perDaemon = daemons.indices.map { index in
            BenchRow([
                "pid": .integer(Int(daemons[index])), "no_page_pct": .rounded(without[index], 2),
                "page_idle_pct": .rounded(idle[index], 2), "dragging_pct": .rounded(dragging[index], 2),
            ]).jsonLine
        }
        return row.jsonLine.dropLast() + ", \"frames_received_elsewhere\": [\(other.received)], \"daemons\": ["
            + perDaemon.joined(separator: ", ") + "]}"
    }

    /// Each daemon's CPU, as a percentage of one CPU, over `seconds` (running `during` meanwhile, if given).
    private func percent(over seconds: Double, during: (() throws -> Void)? = nil) throws -> [Double] {
        let before = try daemons.map { try ProcessStats.cpuSeconds($0) }
        let started = Date()
        if let during { try during() } else { usleep(UInt32(seconds * 1_000_000)) }
        let elapsed = Date().timeIntervalSince(started)
        return try zip(daemons, before).map { 100 * (try ProcessStats.cpuSeconds($0) - $1) / elapsed }
    }

    /// Binary moves of bubble 1 at `rate` a second for `seconds`; how many were sent.
    private func drag(_ socket: PageSocket) throws -> Int {
        let period = 1 / rate
        let start = Date()
        var index = 0
        while Double(index) * period < seconds {
            let pause = start.addingTimeInterval(Double(index) * period).timeIntervalSinceNow
            if pause > 0 { usleep(UInt32(pause * 1_000_000)) }
            var move: [UInt8] = [1, 1]
            for value in [Float(100 + index % 120), Float(150 + index % 60)] {
                withUnsafeBytes(of: value.bitPattern.bigEndian) { move += $0 }
            }
            try socket.sendBinary(move)
            index += 1
        }
        return index
    }
}
