import ArgumentParser
import TestHosts

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// A lab of isolated "test hosts" on this one machine, so that mDNS/DNS-SD tests run against the real Avahi daemon
/// without a single packet reaching the machine's own network. Run through scripts/testnet, whose header documents
/// the commands, the lab's layout and the exit codes: 0 success, 1 failure, 2 bad arguments, 77 requirements missing
/// and not root.
@main
struct TestNet: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scripts/testnet",
        abstract: "Test hosts: network namespaces on a bridge, each with its own D-Bus and avahi-daemon.",
        subcommands: [Up.self, Exec.self, PID.self, Addr.self, Avahi.self, Down.self, List.self])

    func run() throws {
        throw ValidationError("missing command (up, exec, pid, addr, avahi, down, list)")
    }

    /// Parses and runs, single-threaded (`exec` joins a mount namespace); every failure is one line on stderr with
    /// its exit code: 2 for bad arguments (not the parser's 64), 77 for requirements missing, 1 otherwise.
    static func main() {
        // A caller may hand down blocked or ignored signals; every process of the lab would inherit them and shrug
        // off SIGTERM, `down` included. Start afresh with default signal handling.
        SignalDispositions.reset()
        let command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            if exitCode(for: error) == .success { exit(withError: error) }
            fail(message(for: error), status: 2)
        }
        do {
            var command = command
            try command.run()
        } catch let error as TestHostError {
            fail(error.description, status: error.exitCode)
        } catch let error as CommandFailure {
            fail(error.description, status: 1)
        } catch {
            let code = exitCode(for: error)
            if code == .success { exit(withError: error) }
            fail(message(for: error), status: error is ValidationError || code == .validationFailure ? 2 : 1)
        }
    }

    /// The commands in one line, as a bad argument's message ends.
    static let usage =
        "usage: scripts/testnet up N [--prefix NAME] [--ttl SECONDS] [--networks 1|2] | exec NAME I CMD [ARGS...]"
        + " | pid NAME I | addr NAME I [NET] | avahi NAME I stop|start|restart | down NAME | list"

    /// Prints `message` on stderr after "testnet: " (a bad argument's on one line) and exits with `status`.
    static func fail(_ message: String, status: Int32) -> Never {
        let lines = message.split(separator: "\n", omittingEmptySubsequences: true)
        let text = status == 2 ? (lines.first.map(String.init) ?? "") + "; " + usage : lines.joined(separator: "\n")
        let line = Array("testnet: \(text)\n".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        Glibc.exit(status)
    }
}
