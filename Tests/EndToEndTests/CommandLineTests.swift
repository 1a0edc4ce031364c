import Foundation
import TestSupport
import Testing

/// The command-line edges of sessiond and session-client, run on this machine: daemons on loopback with
/// --no-discovery and their control sockets in a temporary directory; no test hosts, no multicast.
@Suite("sessiond and session-client on the command line", .serialized)
struct CommandLineTests {
    /// A temporary directory, removed when the test ends.
    final class Scratch {
        let path: String

        init() throws {
            path =
                FileManager.default.temporaryDirectory
                .appendingPathComponent("lansession-cli-\(UInt32.random(in: 0...UInt32.max))").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    func client(_ arguments: [String]) throws -> ProcessResult {
        try TestLab.run([Cluster.client] + arguments, timeout: 30)
    }

    func daemon(_ arguments: [String], timeout: Double = 20) throws -> ProcessResult {
        try TestLab.run([Cluster.daemon] + arguments, timeout: timeout)
    }

    /// Starts a daemon on loopback and waits until its control socket answers.
    func startDaemon(_ scratch: Scratch, name: String, socket: String) async throws -> HostProcess {
        let process = try HostProcess.local(
            [
                Cluster.daemon, "--no-discovery", "--listen", "127.0.0.1", "--port", "0", "--name", name,
                "--state-dir", "\(scratch.path)/state-\(name)", "--control", socket, "--log-level", "warning",
            ])
        let up = await waitUntil(.seconds(10), every: .milliseconds(50)) {
            (try? client(["--control", socket, "status"]))?.status == 0
        }
        #expect(up, "sessiond \(name) did not answer on \(socket): \(process.stderr)")
        return process
    }

    /// One line on stderr, nothing on stdout.
    func expectOneLine(_ result: ProcessResult, _ context: String) {
        #expect(result.stderr.split(separator: "\n").count == 1, "\(context): \(result.stderr)")
        #expect(result.stdout.isEmpty, "\(context): \(result.stdout)")
    }

    @Test("--version on both tools")
    func version() throws {
        for tool in [Cluster.daemon, Cluster.client] {
            let result = try TestLab.run([tool, "--version"], timeout: 10)
            #expect(result.status == 0)
            #expect(result.stdout == "0.14.0\n", "\(tool): \(result.stdout)")
        }
    }

    @Test("numbers out of range, negative or not numbers: one line that says the range, exit 2")
    func numbersOutOfRange() throws {
        let cases: [([String], String)] = [
            (["increment", "-n", "0"], "--count must be 1...1000000 (got 0)"),
            (["increment", "-n", "99999999999"], "--count must be 1...1000000 (got 99999999999)"),
            (["increment", "-n", "-3"], "--count must be 1...1000000 (got -3)"),
            (["increment", "-n", "abc"], "--count must be 1...1000000 (got abc)"),
            (["watch", "--timeout", "0"], "--timeout must be 0.001...31536000 seconds"),
            (["watch", "--count", "0"], "--count must be 1...1000000000"),
            (["watch", "--since", "-1"], "--since must be 0...18446744073709551615 (got -1)"),
            (["watch", "--run", "5f0c2a9e41d3b786"], "--run goes with --since"),
            (["bench", "--peer", "x", "--count", "0"], "--count must be 1...1000000"),
            (["bench", "--peer", "x", "--size", "-1"], "--size must be 0...65535 bytes"),
            (["bubble", "pickup", "3"], "bubble ID must be 0...2 (got 3)"),
            (["bubble", "move", "0", "1e400", "5"], "X must be -1000000...1000000"),
            (["bubbles", "--step", "0"], "--step must be 0.1...300"),
            (["accept", "x"], "ID must be an invitation's number"),
        ]
        for (arguments, message) in cases {
            let result = try client(["--control", "/nonexistent/sock"] + arguments)
            #expect(result.status == 2, "\(arguments): exit \(result.status)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            expectOneLine(result, "\(arguments)")
        }
        for (arguments, message) in [
            (["--port", "70000"], "--port must be 0...65535 (got 70000)"),
            (["--port", "-1"], "--port must be 0...65535 (got -1)"),
            (["--max-peers", "0"], "--max-peers must be 1...64 (got 0)"),
            (["--bt-channel", "x"], "--bt-channel must be 1...30 (got x)"),
            (["--le-psm", "300"], "--le-psm must be 128...255 (got 300)"),
        ] {
            let result = try daemon(["--no-discovery"] + arguments)
            #expect(result.status == 2, "\(arguments): exit \(result.status)")
            #expect(result.stderr == "sessiond: \(message)\n", "\(arguments): \(result.stderr)")
        }
        // Transports: names or a list of them; RFCOMM alone has no discovery of its own.
        for (arguments, message) in [
            (["--transport", "lan,bogus"], "--transport"),
            (["--transport", ""], "--transport"),
            (["--transport", "rfcomm"], "--transport rfcomm needs --no-discovery"),
        ] {
            let result = try daemon(arguments)
            #expect(result.status == 2, "\(arguments): exit \(result.status)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            expectOneLine(result, "\(arguments)")
        }
    }

    @Test("--json: errors are one JSON object on stderr, with the exit status")
    func jsonErrors() throws {
        for (arguments, status) in [
            (["--json", "--control", "/nonexistent/sock", "status"], 1),
            (["--json", "increment", "-n", "0"], 2),
        ] {
            let result = try client(arguments)
            #expect(result.status == Int32(status), "\(arguments): exit \(result.status)")
            expectOneLine(result, "\(arguments)")
            let object = try JSONSerialization.jsonObject(with: Data(result.stderr.utf8)) as? [String: Any]
            #expect(object?["exitCode"] as? Int == status, "\(arguments): \(result.stderr)")
            #expect((object?["error"] as? String)?.isEmpty == false, "\(arguments): \(result.stderr)")
        }
    }

    @Test("a second sessiond on a served control socket stops before joining; a stale socket file is replaced")
    func secondDaemon() async throws {
        let scratch = try Scratch()
        let socket = "\(scratch.path)/sessiond.sock"
        let first = try await startDaemon(scratch, name: "first", socket: socket)
        let second = try daemon([
            "--no-discovery", "--listen", "127.0.0.1", "--port", "0", "--state-dir", "\(scratch.path)/state-second",
            "--control", socket,
        ])
        #expect(second.status == 1, "exit \(second.status): \(second.stderr)")
        #expect(second.stderr == "sessiond: another sessiond already serves the control socket \(socket)\n")
        // It stopped before its state directory, let alone the session: nothing of it exists.
        #expect(!FileManager.default.fileExists(atPath: "\(scratch.path)/state-second"))
        #expect(try client(["--control", socket, "status"]).stdout.contains("first"))

        // Killed, the first daemon leaves its socket file behind; the next one takes it over.
        kill(first.pid, SIGKILL)
        #expect(await waitUntil(.seconds(5), every: .milliseconds(50)) { !first.isRunning })
        #expect(FileManager.default.fileExists(atPath: socket))
        let third = try await startDaemon(scratch, name: "third", socket: socket)
        #expect(try client(["--control", socket, "status"]).stdout.contains("third"))
        third.stop()
    }

    @Test("a state directory that is a file or has no parent: one line, exit 1")
    func badStateDirectory() throws {
        let scratch = try Scratch()
        let file = "\(scratch.path)/file"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        for (directory, problem) in [
            (file, "not a directory"), ("\(scratch.path)/missing/state", "does not exist"),
            ("\(file)/state", "Not a directory"),
        ] {
            let result = try daemon([
                "--no-discovery", "--listen", "127.0.0.1", "--state-dir", directory, "--control",
                "\(scratch.path)/sock",
            ])
            #expect(result.status == 1, "\(directory): exit \(result.status)")
            #expect(result.stderr.hasPrefix("sessiond: --state-dir \(directory): "), "\(result.stderr)")
            #expect(result.stderr.contains(problem), "\(directory): \(result.stderr)")
            expectOneLine(result, directory)
        }
        let empty = try daemon(["--no-discovery", "--state-dir", ""])
        #expect(empty.status == 2, "\(empty.stderr)")
    }

    @Test(
        "against a daemon: unknown invitation and peer list the valid ones; increment says what it added; watch times")
    func againstDaemon() async throws {
        let scratch = try Scratch()
        let socket = "\(scratch.path)/sessiond.sock"
        let process = try await startDaemon(scratch, name: "solo", socket: socket)
        defer { process.stop() }

        for arguments in [["accept", "99"], ["decline", "99"]] {
            let result = try client(["--control", socket] + arguments)
            #expect(result.status == 1, "\(arguments): exit \(result.status)")
            #expect(result.stderr == "session-client: no invitation 99; none pending\n", "\(result.stderr)")
        }
        let bench = try client(["--control", socket, "--json", "bench", "--peer", "nobody"])
        #expect(bench.status == 1)
        #expect(bench.stderr == #"{"error":"no connected peer \"nobody\"; none connected","exitCode":1}"# + "\n")

        let watch = try HostProcess.local([Cluster.client, "--control", socket, "--json", "watch", "--timeout", "20"])
        defer { watch.stop() }
        try await Task.sleep(for: .milliseconds(300))
        let increment = try client(["--control", socket, "increment", "-n", "3"])
        #expect(increment.stdout == "added 3: this peer 3, total 3\n", "\(increment.stdout) \(increment.stderr)")
        let event = await watch.waitFor(timeout: 10) { $0["event"] as? String == "counter" }
        let time = event?["time"] as? String ?? ""
        #expect(
            time.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/) != nil, "\(event ?? [:])")
    }

    @Test("watch --since: the events after the number, each once, numbered; another run's number says restarted")
    func watchSince() async throws {
        let scratch = try Scratch()
        let socket = "\(scratch.path)/sessiond.sock"
        let process = try await startDaemon(scratch, name: "solo", socket: socket)
        defer { process.stop() }
        for _ in 1...3 { #expect(try client(["--control", socket, "increment"]).status == 0) }
        func events(_ arguments: [String]) throws -> [[String: Any]] {
            let result = try client(["--control", socket, "--json", "watch", "--timeout", "1"] + arguments)
            return result.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }
        let after = try events(["--since", "1"])
        #expect(after.compactMap { $0["seq"] as? Int } == [2, 3], "\(after)")
        #expect(after.compactMap { $0["count"] as? Int } == [2, 3])
        let restarted = try events(["--since", "1", "--run", "0000000000000000"])
        #expect(restarted.first?["event"] as? String == "eventsMissed")
        #expect(restarted.first?["restarted"] as? Bool == true)
        #expect(restarted.compactMap { $0["seq"] as? Int } == [1, 2, 3])
    }

    /// The status of the daemon on `socket`, as JSON.
    func status(_ socket: String) throws -> [String: Any] {
        let result = try client(["--control", socket, "--json", "status"])
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] ?? [:]
    }

    @Test("pair on a terminal: the code is shown and y confirms it; the other side confirms with --confirm; paired")
    func pairOnATerminal() async throws {
        let scratch = try Scratch()
        let socketA = "\(scratch.path)/a.sock"
        let socketB = "\(scratch.path)/b.sock"
        let a = try await startDaemon(scratch, name: "a", socket: socketA)
        defer { a.stop() }
        let portA = try status(socketA)["port"] as? Int ?? 0
        let b = try HostProcess.local(
            [
                Cluster.daemon, "--no-discovery", "--listen", "127.0.0.1", "--port", "0", "--name", "b",
                "--state-dir", "\(scratch.path)/state-b", "--control", socketB, "--log-level", "warning", "--peer",
                "127.0.0.1:\(portA)",
            ])
        defer { b.stop() }
        _ = await waitUntil(.seconds(10), every: .milliseconds(50)) { (try? status(socketB)) != nil }
        let idA = try status(socketA)["peerID"] as? String ?? ""
        let idB = try status(socketB)["peerID"] as? String ?? ""
        // script(1) gives session-client a terminal; "y" waits in it for the question.
        let command = "\(Cluster.client) --control \(socketA) pair \(idB)"
        let asked = try TestLab.run(
            ["sh", "-c", "printf 'y\\n' | script -qec \"$1\" /dev/null", "sh", command], timeout: 30)
        let code = asked.stdout.firstMatch(of: /code (\d{6})/).map { String($0.1) } ?? ""
        #expect(asked.stdout.contains("Does the other device show \(code)? [y/N]"), "\(asked.stdout)")
        #expect(asked.stdout.contains("confirmed here"), "\(asked.stdout)")
        let confirmed = try client(["--control", socketB, "pair", idA, "--confirm", code])
        #expect(confirmed.stdout == "paired with \(idA)\n", "\(confirmed.stdout)\(confirmed.stderr)")
        #expect(
            await waitUntil(.seconds(5), every: .milliseconds(50)) { (try? status(socketA))?["peers"] as? Int == 1 })
        let devices = try client(["--control", socketA, "--json", "devices"])
        #expect(devices.stdout.contains("\"peerID\":\"\(idB)\""), "\(devices.stdout)")
    }
}
