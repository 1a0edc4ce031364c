import ArgumentParser
import Foundation
import SessionControl

#if canImport(Glibc)
    import Glibc
#endif

/// How long a sessiond started next to a running one takes to join it: two test hosts with their own avahi-daemon, a
/// release sessiond running on host 1, and on host 2 N trials of starting sessiond (discovery on) and timing until its
/// status shows the peer connected, then stopping it with SIGTERM; first with sealed links (as every daemon runs),
/// then with --insecure ones (the baseline of what the Noise handshake costs).
struct JoinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join",
        abstract: "(root) A sessiond started next to a running one on test hosts: time to connected.")

    @OptionGroup var output: OutputOptions

    @Option(help: "Starts per mode (1...99).")
    var trials = 20

    @Flag(help: "Remove host 2's state before each start: a new device key (peer id) each time.")
    var fresh = false

    func validate() throws {
        guard (1...99).contains(trials) else { throw ValidationError("--trials needs 1...99") }
    }

    func run() async throws {
        let joins = try await TestHostLab.with("join", hosts: 2) { lab in
            var joins: [(mode: String, milliseconds: [Int])] = []
            for mode in ["sealed", "insecure"] {
                joins.append((mode, try measure(lab, insecure: mode == "insecure")))
            }
            return joins
        }
        let kind = fresh ? "with a new peer id each time" : "restarted with its state"
        output.text("joins of a sessiond started next to a running one, \(kind) (ms, status polled every ~5 ms):")
        for (mode, values) in joins {
            let row = summary(mode, values.sorted())
            if output.json {
                OutputOptions.write(row.jsonLine)
            } else {
                let field = { (key: String) in row[key]?.json ?? "-" }
                let padded = mode.padding(toLength: max(9, mode.count), withPad: " ", startingAt: 0)
                OutputOptions.write(
                    "\(padded) (\(values.count) trials): median \(field("median"))  min \(field("min"))  "
                        + "p90 \(field("p90"))  max \(field("max"))  all: "
                        + values.sorted().map(String.init).joined(separator: " "))
            }
        }
    }

    /// Host 1's daemon started, then `trials` starts of host 2's: the milliseconds from each start until its status
    /// counts one peer.
    private func measure(_ lab: TestHostLab, insecure: Bool) throws -> [Int] {
        let extra = insecure ? ["--insecure"] : []
        let daemon = [
            lab.bin + "/sessiond", "--admission", "open", "--session", "join-bench", "--port", "47000", "--state-dir",
            "/run/join-state", "--log-level", "warning",
        ]
        let host1 = try lab.spawn(inHost: 1, daemon + ["--name", "h1"] + extra)
        defer { host1.stop() }
        sleep(2)  // its advertisement is established
        let control = try lab.path(inHost: 2, "/run/lansession/sessiond.sock")
        var milliseconds: [Int] = []
        for trial in 1...trials {
            if fresh { try lab.run(inHost: 2, ["rm", "-rf", "/run/join-state"]) }
            let start = ContinuousClock.now
            let host2 = try lab.spawn(inHost: 2, daemon + ["--name", "h2"] + extra)
            defer { host2.stop() }
            var joined: Duration?
            for _ in 0..<1000 {
                if let client = try? ControlClient(path: control),
                    let status = try? client.call(.status, as: StatusResult.self), status.peers == 1
                {
                    joined = ContinuousClock.now - start
                    break
                }
                usleep(5_000)
            }
            guard let joined else {
                throw BenchFailure(
                    "join: \(insecure ? "insecure" : "sealed") trial \(trial) did not join within the polls")
            }
            milliseconds.append(
                Int(joined.components.seconds * 1000 + joined.components.attoseconds / 1_000_000_000_000_000))
            host2.stop()
            sleep(1)  // host 1 has seen it leave
        }
        return milliseconds
    }

    /// The row of one mode: median (the mean of the middle two for an even count), min, max and p90 (the largest
    /// below 10 trials).
    private func summary(_ mode: String, _ values: [Int]) -> BenchRow {
        let middle = values.count / 2
        let median: BenchValue =
            values.count % 2 == 1
            ? .integer(values[middle]) : .number(Double(values[middle - 1] + values[middle]) / 2)
        return BenchRow([
            "metric": .string(mode == "sealed" ? "join_ms" : "join_ms_insecure"), "fresh": .bool(fresh),
            "trials": .integer(values.count), "median": median, "min": .integer(values[0]),
            "max": .integer(values[values.count - 1]),
            "p90": .integer(values.count >= 10 ? values[values.count * 9 / 10 - 1] : values[values.count - 1]),
        ])
    }
}
