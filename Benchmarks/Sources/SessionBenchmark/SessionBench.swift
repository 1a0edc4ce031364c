import Crypto
import Dispatch
import Foundation
import Histogram
import LanSession
import LinkCrypto
import NIOCore
import NIOPosix

/// Round-trip latency of LanSession sessions on loopback next to plain SwiftNIO TCP and UDP ping-pong.
///
/// Every row runs on the two event loops of one 2-thread group (client or pinging session on one, server or
/// answering session on the other) and is driven from a Swift async caller, one round trip at a time; see
/// `LatencyMeter` for what a sample includes.
public enum SessionBench {
    /// The only address the benchmark binds to or connects to.
    static let loopback = "127.0.0.1"
    /// Bytes of the raw baselines' message.
    static let messageSize = 3
    /// How long B may take to connect to A.
    static let connectTimeout = Duration.seconds(10)
    /// How long closing sockets, stopping sessions or shutting down the event loops may take.
    static let cleanUpTimeout = 10

    /// What the command line asked for.
    struct Options {
        /// One JSON object per row instead of the table.
        var json = false
        /// Timed round trips per row.
        var count = 10_000
    }

    /// Measures every row (`count` timed round trips each) and prints it: a table, or with `json` one JSON object per
    /// line; then stops everything. Throws if a row could not be measured.
    public static func run(json: Bool, count: Int) async throws {
        let options = Options(json: json, count: count)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 2)
        var failure: (any Error)?
        do {
            try await run(options, group: group)
        } catch {
            failure = error
        }
        await cleanUp("shutting down the event loops") { try? await group.shutdownGracefully() }
        if let failure { throw failure }
    }

    /// Measures every row and prints it. Runs off the main actor, so that round trips resume on the concurrency
    /// pool and never wait for the main thread.
    nonisolated static func run(_ options: Options, group: MultiThreadedEventLoopGroup) async throws {
        // `next()` goes round the group's loops in turn: two calls give its two loops.
        let clientLoop = group.next()
        let serverLoop = group.next()
        guard clientLoop !== serverLoop else { throw BenchError("the group gave the same event loop twice") }
        let message = [UInt8](repeating: 0x2a, count: messageSize)
        let count = options.count
        var results: [LatencyResult] = []
        func report(_ name: String, transport: String, channel: String, _ histogram: Histogram<UInt64>) {
            let result = LatencyResult(
                name: name, transport: transport, channel: channel, size: messageSize, histogram: histogram)
            results.append(result)
            if options.json {
                // Unbuffered, so that each line shows up as soon as its row is measured.
                FileHandle.standardOutput.write(Data((result.jsonLine + "\n").utf8))
            }
        }

        printError("bench session: raw-tcp, \(LatencyMeter.warmUp) + \(count) round trips")
        let tcp = try await RawTCPPingPong.start(message: message, clientLoop: clientLoop, serverLoop: serverLoop)
        let tcpSamples = try await closing("the raw TCP pair", { await tcp.close() }) {
            try await LatencyMeter.measure(count: count) { try await tcp.roundTrip() }
        }
        report("raw-tcp", transport: "loopback-raw", channel: "reliable", tcpSamples)

        printError("bench session: raw-udp, \(LatencyMeter.warmUp) + \(count) round trips")
        let udp = try await RawUDPPingPong.start(message: message, clientLoop: clientLoop, serverLoop: serverLoop)
        let udpSamples = try await closing("the raw UDP pair", { await udp.close() }) {
            try await LatencyMeter.measure(count: count) { try await udp.roundTrip() }
        }
        report("raw-udp", transport: "loopback-raw", channel: "unreliable", udpSamples)

        // The same pair of sessions with insecure links (the baseline, `--insecure`), then sealed as every session runs
        // (the Noise handshake, encrypted records and datagrams).
        for (suffix, sealed) in [("", false), ("-sealed", true)] {
            let started = ContinuousClock.now
            let pair = try await SessionPair.start(loopA: clientLoop, loopB: serverLoop, sealed: sealed)
            try await closing("the sessions", { await pair.stop() }) {
                try await pair.waitUntilConnected(within: connectTimeout)
                printError("bench session: session\(suffix) connected \(ContinuousClock.now - started) after the start")
                let peer = pair.b.peerID
                printError("bench session: session\(suffix)-reliable, \(LatencyMeter.warmUp) + \(count) round trips")
                let reliable = try await LatencyMeter.measure(count: count) {
                    _ = try await pair.a.ping(peer, unreliable: false)
                }
                report("session\(suffix)-reliable", transport: LANTransport.name, channel: "reliable", reliable)
                // With `unreliable: true`, a ping quietly goes on the TCP link when UDP is not the route: check it is.
                try await pair.checkDatagramRoute()
                printError("bench session: session\(suffix)-unreliable, \(LatencyMeter.warmUp) + \(count) round trips")
                let unreliable = try await LatencyMeter.measure(count: count) {
                    _ = try await pair.a.ping(peer, unreliable: true)
                }
                try await pair.checkDatagramRoute()
                report("session\(suffix)-unreliable", transport: LANTransport.name, channel: "unreliable", unreliable)
            }
        }

        if !options.json {
            printTable(results)
        }
    }

    /// Runs `body`, then `close` whether `body` threw or not; `close` is bounded by ``cleanUp(_:_:)``.
    nonisolated static func closing<T>(
        _ what: String, _ close: @Sendable () async -> Void, after body: () async throws -> T
    ) async throws -> T {
        let value: T
        do {
            value = try await body()
        } catch {
            await cleanUp("closing \(what)", close)
            throw error
        }
        await cleanUp("closing \(what)", close)
        return value
    }

    /// Runs `body`, and ends the process if it takes longer than ``cleanUpTimeout`` seconds.
    nonisolated static func cleanUp(_ what: String, _ body: @Sendable () async -> Void) async {
        let watchdog = DispatchWorkItem {
            printError("bench session: \(what) did not finish within \(cleanUpTimeout) s")
            exit(1)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(cleanUpTimeout), execute: watchdog)
        await body()
        watchdog.cancel()
    }

    /// Prints the rows as an aligned table, then how the session's reliable median compares with raw TCP's.
    static func printTable(_ results: [LatencyResult]) {
        let header = LatencyResult.tableHeader
        let rows = results.map(\.tableCells)
        let widths = header.indices.map { column in
            ([header] + rows).map { $0[column].count }.max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            cells.indices.map { column in
                let padding = String(repeating: " ", count: widths[column] - cells[column].count)
                // Names are left-aligned, numbers right-aligned.
                return column < 2 ? cells[column] + padding : padding + cells[column]
            }.joined(separator: "  ")
        }
        print(line(header))
        print(String(repeating: "-", count: widths.reduce(0, +) + 2 * (widths.count - 1)))
        for row in rows {
            print(line(row))
        }

        let session = results.first { $0.name == "session-reliable" }
        let raw = results.first { $0.name == "raw-tcp" }
        if let session, let raw, raw.medianNanoseconds > 0 {
            let factor = Double(session.medianNanoseconds) / Double(raw.medianNanoseconds)
            print("\nsession reliable p50 is \(String(format: "%.1f", factor))× raw TCP p50")
        }
        let sealed = results.first { $0.name == "session-sealed-reliable" }
        if let session, let sealed, session.medianNanoseconds > 0 {
            let added = (Double(sealed.medianNanoseconds) - Double(session.medianNanoseconds)) / 1_000
            print(
                "sealing adds \(String(format: "%.1f", added)) µs to the reliable p50 (four seals or opens per round trip)"
            )
            if let cost = try? Self.sealingCost() {
                print(
                    "one seal and one open of a 10-byte frame (its 28-byte record), on this thread: "
                        + "\(String(format: "%.2f", cost)) µs (swift-crypto's ChaChaPoly, a context per call)")
            }
        }
    }

    /// Microseconds for one record sealed and opened, as a link does it: keys of a real handshake, 100,000 times.
    static func sealingCost() throws -> Double {
        var initiator = NoiseHandshake(
            role: .initiator, staticKey: Curve25519.KeyAgreement.PrivateKey(), prologue: [], psk: nil)
        var responder = NoiseHandshake(
            role: .responder, staticKey: Curve25519.KeyAgreement.PrivateKey(), prologue: [], psk: nil)
        _ = try responder.readMessage(try initiator.writeMessage(payload: []))
        _ = try initiator.readMessage(try responder.writeMessage(payload: []))
        _ = try responder.readMessage(try initiator.writeMessage(payload: []))
        var sealer = try initiator.split().makeRecordSealer()
        var opener = try responder.split().makeRecordOpener()
        let frame = [UInt8](repeating: 7, count: 10)
        var record: [UInt8] = []
        record.reserveCapacity(64)
        let count = 100_000
        let start = ContinuousClock.now
        for _ in 0..<count {
            record.removeAll(keepingCapacity: true)
            try frame.withUnsafeBytes { try sealer.seal($0, into: &record) }
            _ = try record.withUnsafeBytes { try opener.open($0) }
        }
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.attoseconds / 1_000_000_000_000 + elapsed.components.seconds * 1_000_000)
            / Double(count)
    }
}

/// Writes one line to standard error.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}
