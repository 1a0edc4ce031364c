import ArgumentParser
import Foundation
import SessionControl

/// The command-line client of the local `sessiond`: one subcommand per request of the control protocol.
@main
struct SessionClient: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session-client",
        abstract: "Talks to the local sessiond over its control socket.",
        discussion: """
            Text for people by default; with --json, the daemon's result as one JSON document (streams: one JSON \
            object per line). Exit status: 0 done, 1 the daemon is unreachable or refused, 2 bad arguments.
            """,
        version: LanSessionVersion.current,
        subcommands: [
            Status.self, Peers.self, Increment.self, Counter.self, Watch.self, Bubble.self, Bubbles.self,
            Invitations.self, Accept.self, Decline.self, Bench.self,
        ]
    )

    @OptionGroup var global: GlobalOptions

    func run() throws {
        throw ClientError(.usage, "missing command; see --help for the list")
    }

    /// Parses, runs, and maps every failure to one line on stderr and its exit status: 2 for bad arguments (instead
    /// of the parser's 64), 1 when the daemon is unreachable or refuses; help still goes to stdout with status 0.
    static func main() {
        var command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            if exitCode(for: error) == .success { exit(withError: error) }
            fail(message(for: error), status: 2)
        }
        do {
            try command.run()
        } catch let error as ClientError {
            fail(error.message, status: error.exitStatus)
        } catch let error as ExitCode {
            exit(withError: error)
        } catch {
            let code = exitCode(for: error)
            if code == .success { exit(withError: error) }
            fail(message(for: error), status: code == .validationFailure ? 2 : 1)
        }
    }

    /// Prints `message` as one line on stderr and exits with `status`.
    private static func fail(_ message: String, status: Int32) -> Never {
        Output.error("session-client: " + Output.oneLine(message))
        exit(withError: ExitCode(status))
    }
}
