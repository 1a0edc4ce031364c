import ArgumentParser
import Foundation

/// The project's benchmarks, each beside its anchor: in-process ones on 127.0.0.1, and ones on test hosts (root)
/// that drive the anchors' own programs (sockperf, iperf3, scp, ENet, Chromium) and release sessiond.
@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Runs the project's benchmarks.",
        discussion: """
            Each prints a table, or with --json one JSON object per line and nothing else on stdout; progress and \
            build output go to stderr. Exit status: 0 done, 1 a benchmark failed, 2 bad arguments.
            """,
        subcommands: [
            CodecCommand.self, SessionCommand.self, TransferCommand.self, PushCommand.self, NetCommand.self,
            JoinCommand.self, ThroughputCommand.self, WebCommand.self, PagesCommand.self, AllCommand.self,
            MeshCommand.self,
        ]
    )

    /// Parses and runs; a bad argument is one line on stderr and exit status 2 (not the parser's 64), a failure one
    /// line and 1; help goes to stdout with 0.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch let error as ExitCode {
            exit(withError: error)
        } catch let error as BenchFailure {
            fail(error.description, status: 1)
        } catch let error as SubprocessError {
            fail(error.description, status: 1)
        } catch {
            let code = exitCode(for: error)
            if code == .success { exit(withError: error) }
            let status: Int32 = error is ValidationError || code == .validationFailure ? 2 : 1
            fail(message(for: error), status: status)
        }
    }

    /// `message`'s first line on stderr, then exit.
    static func fail(_ message: String, status: Int32) -> Never {
        let line = message.split(separator: "\n").first.map(String.init) ?? message
        FileHandle.standardError.write(Data("bench: \(line)\n".utf8))
        Foundation.exit(status)
    }
}
