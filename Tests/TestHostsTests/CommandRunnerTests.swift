import TestHosts
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Commands run to completion with their output, their input fed as they read it, and a typed failure that names the
/// command, its exit status and its stderr.
@Suite("CommandRunner")
struct CommandRunnerTests {
    @Test("stdout, stderr and the exit status; input larger than a pipe holds")
    func output() throws {
        let input = String(repeating: "0123456789abcdef\n", count: 20_000)
        let result = try CommandRunner.result(["sh", "-c", "cat; echo late >&2; exit 3"], input: input)
        #expect(result.status == 3)
        #expect(result.stdout == input)
        #expect(result.stderr == "late\n")
    }

    @Test("a failure carries the command, its exit status and its stderr")
    func failure() {
        let command = ["sh", "-c", "echo first >&2; echo 'no such lab' >&2; exit 4"]
        #expect(throws: CommandFailure(command: command, status: 4, stderr: "first\nno such lab\n")) {
            try CommandRunner.run(command)
        }
        let failure = CommandFailure(command: ["ip", "netns", "add", "x"], status: 1, stderr: "a\nexists\n")
        #expect(failure.description == "ip netns add x failed (exit 1): exists")
    }

    @Test("a command that cannot be started")
    func missing() {
        #expect(throws: CommandFailure.self) { try CommandRunner.run(["/nonexistent/command"]) }
    }

    /// Signals 32 and 33 are the C library's own, which it sets up in every process it starts: not counted.
    @Test("a child starts with no signal blocked or ignored")
    func signals() throws {
        let status = try CommandRunner.run(["cat", "/proc/self/status"])
        func mask(_ name: String) -> UInt64? {
            status.split(separator: "\n").first { $0.hasPrefix(name + ":") }?.split(separator: "\t").last
                .flatMap { UInt64($0, radix: 16) }
        }
        #expect(mask("SigBlk") == 0)
        #expect(mask("SigIgn").map { $0 & ~0x1_8000_0000 } == 0)
    }

    @Test("the process table: this process lives, its parent is known, its name read")
    func processTable() {
        #expect(ProcessTable.isLive(getpid()))
        #expect(ProcessTable.parent(of: getpid()) == getppid())
        #expect(ProcessTable.name(getpid())?.isEmpty == false)
        #expect(!ProcessTable.isLive(0))
    }
}
