import Foundation
import SessionControl

/// What `push` measured, and its report: one JSON row, or the table.
struct PushFigures {
    let megabytes: Int
    let rate: String?
    let sealing: String
    /// Seconds of the raw copy, the scp runs and the push; CPU seconds of both ends of each.
    var raw = 0.0
    var rawCPU = 0.0
    var scpGCM = 0.0
    var scpGCMCPU = 0.0
    var scpChaCha = 0.0
    var scpChaChaCPU = 0.0
    var push = 0.0
    var senderCPU = 0.0
    var receiverCPU = 0.0
    /// iperf3's bytes a second, and its own CPU nanoseconds a byte.
    var iperf = 1.0
    var iperfCPUPerByte = 0.0
    /// The pings' round trips, idle and during the push; whether they were all taken while it ran.
    var idle: BenchResult?
    var busy: BenchResult?
    var within = true

    init(megabytes: Int, rate: String?, sealing: String) {
        self.megabytes = megabytes
        self.rate = rate
        self.sealing = sealing
    }

    private var size: Double { Double(megabytes) * 1e6 }

    /// CPU nanoseconds a byte of the moved file.
    private func perByte(_ cpuSeconds: Double) -> Double { cpuSeconds * 1e9 / size }

    /// Each row's CPU per byte, by its JSON name.
    private var cpu: KeyValuePairs<String, Double> {
        [
            "iperf3": iperfCPUPerByte, "raw_copy": perByte(rawCPU), "scp_aes128_gcm": perByte(scpGCMCPU),
            "scp_chacha20": perByte(scpChaChaCPU), "push": perByte(senderCPU + receiverCPU),
        ]
    }

    func print(json: Bool) {
        json ? OutputOptions.write(row.jsonLine) : printTable()
    }

    /// The JSON row, as the script before this tool wrote it.
    var row: BenchRow {
        let mbps = { (took: Double) in BenchValue.rounded(size / took / 1e6, 1) }
        var row = BenchRow([
            "metric": "push", "megabytes": .integer(megabytes), "link": .string(rate ?? "none"),
            "sealing": .string(sealing), "iperf3_mbps": .rounded(iperf / 1e6, 1), "raw_copy_mbps": mbps(raw),
            "scp_aes128_gcm_mbps": mbps(scpGCM), "scp_chacha20_mbps": mbps(scpChaCha), "push_mbps": mbps(push),
            "push_vs_iperf3": .rounded(size / push / iperf, 3),
            "push_vs_scp": .rounded(min(scpGCM, scpChaCha) / push, 2),
            "ping_idle_p50_us": .microseconds(idle?.p50_us), "ping_idle_p99_us": .microseconds(idle?.p99_us),
            "ping_busy_p50_us": .microseconds(busy?.p50_us), "ping_busy_p99_us": .microseconds(busy?.p99_us),
            "ping_busy_within_push": .bool(within),
        ])
        for (name, value) in cpu { row["\(name)_cpu_ns_per_byte"] = .rounded(value, 3) }
        row["push_sender_cpu_ns_per_byte"] = .rounded(perByte(senderCPU), 3)
        row["push_receiver_cpu_ns_per_byte"] = .rounded(perByte(receiverCPU), 3)
        return row
    }

    private func printTable() {
        let write = OutputOptions.write
        write("\(megabytes) MB host 1 -> host 2, link \(rate ?? "none"), sessiond's links \(sealing)")
        write(
            "ROW".padding(toLength: 34, withPad: " ", startingAt: 0)
                + [("SECONDS", 8), ("MB/s", 8), ("vs IPERF3", 9), ("vs SCP", 7), ("CPU ns/B", 9)].map { title, width in
                    " " + String(repeating: " ", count: width - title.count) + title
                }.joined())
        let bestSCP = min(scpGCM, scpChaCha)
        let rows: [(String, Double, Double)] = [
            ("iperf3 (one stream, 3 s)", size / iperf, iperfCPUPerByte),
            ("raw TCP copy (sendfile, to a file)", raw, perByte(rawCPU)),
            ("scp aes128-gcm@openssh.com", scpGCM, perByte(scpGCMCPU)),
            ("scp chacha20-poly1305@openssh.com", scpChaCha, perByte(scpChaChaCPU)),
            ("sessiond push (verified, synced)", push, perByte(senderCPU + receiverCPU)),
        ]
        for (name, took, cpu) in rows {
            write(
                name.padding(toLength: 34, withPad: " ", startingAt: 0)
                    + String(
                        format: " %8.3f %8.1f %9.2f %7.2f %9.2f", took, size / took / 1e6, size / took / iperf,
                        bestSCP / took, cpu))
        }
        let tick = String(format: "%g", 1000 / Double(ProcessStats.ticksPerSecond))
        write(
            "CPU ns/B: user + system time of both ends over the bytes moved (iperf3's own figure; sessiond: host 1 "
                + String(format: "%.2f, host 2 %.2f", perByte(senderCPU), perByte(receiverCPU))
                + "; clock ticks of \(tick) ms)")
        let idle =
            self.idle.map {
                "p50 \(BenchValue.microseconds($0.p50_us).json) us, p99 \(BenchValue.microseconds($0.p99_us).json) us"
            } ?? "?"
        let busy =
            self.busy.map {
                "p50 \(BenchValue.microseconds($0.p50_us).json) us, p99 \(BenchValue.microseconds($0.p99_us).json) us, "
                    + "max \(BenchValue.microseconds($0.max_us).json) us"
            } ?? "?"
        write(
            "ping round trip, idle: \(idle); during the push: \(busy)"
                + (within ? "" : " (the push ended before the pings did: use a larger --megabytes)"))
    }
}
