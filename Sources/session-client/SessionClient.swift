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
            object per line), and errors as one JSON object on stderr: {"error": "...", "exitCode": N}. Exit status: 0 \
            done, 1 the daemon is unreachable or refused, 2 bad arguments.
            """,
        version: LanSessionVersion.current,
        subcommands: [
            Status.self, Peers.self, Increment.self, Counter.self, Watch.self, Bubble.self, Bubbles.self,
            Invitations.self, Accept.self, Decline.self, Bench.self, Send.self, Push.self, StreamFile.self,
            Streams.self, Pair.self, Pairings.self, Devices.self, Unpair.self, Web.self,
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

    /// Prints `message` as one line on stderr and exits with `status`; with `--json`, as a JSON object.
    private static func fail(_ message: String, status: Int32) -> Never {
        if jsonRequested {
            Output.error(ErrorReport(error: Output.oneLine(message), exitCode: status).json)
        } else {
            Output.error("session-client: " + Output.oneLine(message))
        }
        exit(withError: ExitCode(status))
    }

    /// Whether `--json` is among the arguments (before any `--`): known even when parsing them failed.
    static var jsonRequested: Bool {
        CommandLine.arguments.dropFirst().prefix { $0 != "--" }.contains("--json")
    }
}

/// A failure as `--json` reports it on stderr: `{"error":"...","exitCode":N}`.
struct ErrorReport: Encodable {
    var error: String
    var exitCode: Int32

    /// The object on one line, keys in a fixed order.
    var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return #"{"error":"cannot encode the error","exitCode":1}"# }
        return String(decoding: data, as: UTF8.self)
    }
}
