import ArgumentParser
import Testing

@testable import session_client

/// `session-client watch`'s arguments: where it resumes from, and the one-line refusals of bad ones.
@Suite("watch arguments")
struct WatchArgumentsTests {
    @Test("--since takes an event's number, --run its run")
    func since() throws {
        let watch = try Watch.parse(["--since", "41", "--run", "5f0c2a9e41d3b786", "--reconnect"])
        #expect(watch.since?.parsed == 41)
        #expect(watch.runID == "5f0c2a9e41d3b786")
        #expect(watch.reconnect)
        #expect(try Watch.parse(["--since", "0"]).since?.parsed == 0)
        #expect(try Watch.parse(["--since", "18446744073709551615"]).since?.parsed == .max)
        let plain = try Watch.parse([])
        #expect(plain.since == nil && plain.runID == nil && !plain.reconnect)
    }

    @Test(
        "a bad --since or --run is refused in one line that names the option",
        arguments: [
            (["--since", "-1"], "--since must be 0...18446744073709551615 (got -1)"),
            (["--since", "x"], "--since must be 0...18446744073709551615 (got x)"),
            (
                ["--since", "18446744073709551616"],
                "--since must be 0...18446744073709551615 (got 18446744073709551616)"
            ),
            (["--since", ""], #"--since must be 0...18446744073709551615 (got "")"#),
            (["--run", "5f0c2a9e41d3b786"], "--run goes with --since"),
            (["--since", "1", "--run", ""], "--run needs a non-empty id"),
        ])
    func refused(_ arguments: [String], _ message: String) {
        do {
            _ = try Watch.parse(arguments)
            Issue.record("\(arguments) parsed")
        } catch {
            #expect(Watch.message(for: error) == message, "\(arguments)")
            #expect(Watch.exitCode(for: error) == .validationFailure, "exit 2 in session-client's main")
        }
    }
}
