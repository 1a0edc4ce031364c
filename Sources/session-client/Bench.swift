import ArgumentParser
import Foundation
import SessionControl

/// `bench`: round-trip latency to one peer, measured by the daemon.
struct Bench: RequestCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measures round trips to a peer and prints their percentiles in microseconds.")

    /// The channel to measure.
    enum Channel: String, ExpressibleByArgument, CaseIterable {
        case reliable
        case unreliable
    }

    @OptionGroup var global: GlobalOptions

    @Option(help: "The peer: its peer id (16 hex digits) or its name.")
    var peer: String

    @Option(help: "The transport.")
    var transport = "lan"

    @Option(help: "The channel: reliable or unreliable.")
    var channel = Channel.reliable

    @Option(parsing: .unconditional, help: "How many round trips (1...\(Limits.count.upperBound)).")
    var count = CommandLineNumber(1000)

    @Option(
        parsing: .unconditional,
        help: "The size of each frame in bytes (0...\(Limits.frameSize.upperBound); capped at the largest ping frame).")
    var size = CommandLineNumber(3)

    func validate() throws {
        guard !peer.isEmpty else { throw ValidationError("--peer needs a peer id or name") }
        guard !transport.isEmpty else { throw ValidationError("--transport needs a name") }
        try count.validated("--count", in: Limits.count)
        try size.validated("--size", in: Limits.frameSize, unit: "bytes")
    }

    func request() -> ControlCommand {
        .bench(
            ControlCommand.Bench(
                peer: peer, transport: transport, channel: channel == .unreliable ? .unreliable : .reliable,
                count: count.value(or: 1000), size: size.value(or: 3)))
    }

    /// A peer that is not connected fails here, with the ones that are, rather than with the daemon's bare refusal.
    func prepare(_ daemon: Daemon) throws(ClientError) {
        let peers = try daemon.call(ControlCommand.peers).decode([PeerResult].self)
        let connected = peers.filter { $0.state == "connected" }.sorted { ($0.name, $0.peerID) < ($1.name, $1.peerID) }
        guard !connected.contains(where: { $0.peerID == peer.lowercased() || $0.name == peer }) else { return }
        let known = connected.map { "\($0.name) (\($0.peerID))" }
        throw ClientError(
            .refused,
            "no connected peer \"\(peer)\"; "
                + (known.isEmpty ? "none connected" : "connected: " + known.joined(separator: ", ")))
    }

    func printText(_ result: BenchResult, daemon: Daemon) throws(ClientError) {
        let micros = [result.p50_us, result.p90_us, result.p99_us, result.max_us, result.mean_us]
        Output.lines(
            TextTable(
                headers: ["TRANSPORT", "CHANNEL", "COUNT", "SIZE", "P50 us", "P90 us", "P99 us", "MAX us", "MEAN us"],
                rows: [
                    [result.transport, result.channel, String(result.count), String(result.size)]
                        + micros.map { String(format: "%.1f", $0) }
                ],
                rightAligned: Set(2...8)
            ).render()
        )
    }
}
