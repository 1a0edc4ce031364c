import Crypto
import Foundation
import Histogram
@_spi(Diagnostics) import LanSession
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// Throughput of a resource transfer between two sessions on loopback, next to a raw TCP copy of the same file in
/// the same run, and the round-trip time of small messages while the transfer runs.
///
/// Rows: `raw-tcp-copy` (one socket, `sendfile` on one thread, `read` and `write` into a file on another: the
/// kernel's floor for a copy with this disk), `raw-tcp-copy+sha256` (the same with both ends hashing what they move,
/// as a verified transfer must), then `session-resource` over insecure links and `session-resource-sealed` over encrypted ones (as every session runs).
/// The files live in the temporary directory (`TMPDIR`). Each session row also gives the reliable round trip of a ping measured while the transfer runs, next to
/// the same measured idle.
public enum TransferBench {
    struct Row {
        var name: String
        var bytes: Int
        var seconds: Double
        var idleP50: Double?
        var busyP50: Double?
        var busyP99: Double?
        var busyMax: Double?

        var megabytesPerSecond: Double { Double(bytes) / seconds / 1e6 }
    }

    /// Copies a file of `megabytes` MB (raw, then between sessions) and prints the rows: a table, or with `json` one
    /// JSON object per line.
    public static func run(json: Bool, megabytes: Int) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("transfer-bench-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let source = directory.appendingPathComponent("source.bin").path
        let size = megabytes * 1_000_000
        try writeRandomFile(source, size: size)

        var rows: [Row] = []
        let rawDestination = directory.appendingPathComponent("raw.bin").path
        let rawSeconds = try RawCopy.run(source: source, destination: rawDestination, size: size)
        try FileManager.default.removeItem(atPath: rawDestination)
        rows.append(Row(name: "raw-tcp-copy", bytes: size, seconds: rawSeconds))
        let hashedSeconds = try RawCopy.run(source: source, destination: rawDestination, size: size, verify: true)
        try FileManager.default.removeItem(atPath: rawDestination)
        rows.append(Row(name: "raw-tcp-copy+sha256", bytes: size, seconds: hashedSeconds))

        for sealed in [false, true] {
            let inbox = directory.appendingPathComponent(sealed ? "inbox-sealed" : "inbox")
            try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
            rows.append(try await session(source: source, size: size, inbox: inbox.path, sealed: sealed))
        }

        if json {
            for row in rows {
                var fields = [
                    "\"metric\": \"transfer_MBps\"", "\"name\": \"\(row.name)\"", "\"bytes\": \(row.bytes)",
                    "\"seconds\": \(String(format: "%.3f", row.seconds))",
                    "\"MBps\": \(String(format: "%.1f", row.megabytesPerSecond))",
                    "\"vs_raw\": \(String(format: "%.2f", row.megabytesPerSecond / rows[0].megabytesPerSecond))",
                ]
                if let idle = row.idleP50, let p50 = row.busyP50, let p99 = row.busyP99, let max = row.busyMax {
                    fields += [
                        "\"idle_rtt_p50_us\": \(String(format: "%.1f", idle))",
                        "\"busy_rtt_p50_us\": \(String(format: "%.1f", p50))",
                        "\"busy_rtt_p99_us\": \(String(format: "%.1f", p99))",
                        "\"busy_rtt_max_us\": \(String(format: "%.1f", max))",
                    ]
                }
                print("{" + fields.joined(separator: ", ") + "}")
            }
        } else {
            print("file of \(megabytes) MB (10^6 bytes) on 127.0.0.1; RTT: reliable ping, idle and during the transfer")
            print(
                "ROW                       SECONDS     MB/s  vs RAW   IDLE RTT p50 us   BUSY RTT p50 us   p99 us    max us"
            )
            for row in rows {
                let ratio = row.megabytesPerSecond / rows[0].megabytesPerSecond
                var line =
                    row.name.padding(toLength: 24, withPad: " ", startingAt: 0)
                    + String(format: "%8.3f %8.1f %7.2f", row.seconds, row.megabytesPerSecond, ratio)
                if let idle = row.idleP50, let p50 = row.busyP50, let p99 = row.busyP99, let max = row.busyMax {
                    line += String(format: " %17.1f %17.1f %8.1f %9.1f", idle, p50, p99, max)
                }
                print(line)
            }
        }
    }

    /// Two sessions on their own loops; A sends the file to B and pings B on the side.
    static func session(source: String, size: Int, inbox: String, sealed: Bool) async throws -> Row {
        var logger = Logger(label: "transfer-bench")
        logger.logLevel = .notice
        var configurationA = SessionConfiguration(displayName: "a", sessionName: "transfer-bench", host: "127.0.0.1")
        configurationA.admission = .open
        configurationA.isInsecure = !sealed
        var configurationB = SessionConfiguration(displayName: "b", sessionName: "transfer-bench", host: "127.0.0.1")
        configurationB.admission = .open
        configurationB.isInsecure = !sealed
        configurationB.inbox = inbox
        let a = try Session(configuration: configurationA, logger: logger)
        let b = try Session(configuration: configurationB, logger: logger)
        let port = try await a.start()
        try await b.start()
        try await b.connect(to: Endpoint(host: "127.0.0.1", port: port))
        while try await a.peers().first(where: { $0.peerID == b.peerID })?.state != .connected {
            try await Task.sleep(for: .milliseconds(5))
        }
        var idle = Histogram<UInt64>(highestTrackableValue: 10_000_000_000, numberOfSignificantValueDigits: .three)
        for roundTrip in try await a.measureRoundTrips(to: b.peerID, count: 2000) {
            idle.record(nanoseconds(roundTrip))
        }
        let done = Atomic<Bool>(false)
        let started = ContinuousClock.now
        async let pings: Histogram<UInt64> = {
            var busy = Histogram<UInt64>(highestTrackableValue: 10_000_000_000, numberOfSignificantValueDigits: .three)
            while !done.load(ordering: .relaxed) {
                busy.record(nanoseconds(try await a.ping(b.peerID)))
            }
            return busy
        }()
        let result = try await a.sendResource(at: source, named: "payload.bin", to: b.peerID)
        let elapsed = ContinuousClock.now - started
        done.store(true, ordering: .relaxed)
        let busy = try await pings
        guard case .finished(_, let digest) = result.phase,
            let landed = try? sha256(of: inbox + "/payload.bin"), landed == digest
        else {
            throw BenchErrorText("the file did not land intact: \(result)")
        }
        await b.stop()
        await a.stop()
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Row(
            name: sealed ? "session-resource-sealed" : "session-resource", bytes: size, seconds: seconds,
            idleP50: Double(idle.valueAtPercentile(50)) / 1000, busyP50: Double(busy.valueAtPercentile(50)) / 1000,
            busyP99: Double(busy.valueAtPercentile(99)) / 1000, busyMax: Double(busy.max) / 1000)
    }

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
    }

    static func sha256(of path: String) throws -> String {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hasher.update(data: chunk) }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    static func writeRandomFile(_ path: String, size: Int) throws {
        var state: UInt64 = 0x1234_5678
        var bytes = [UInt8](repeating: 0, count: size)
        bytes.withUnsafeMutableBytes { raw in
            let words = raw.bindMemory(to: UInt64.self)
            for index in words.indices {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                words[index] = z ^ (z >> 27)
            }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}

struct BenchErrorText: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
