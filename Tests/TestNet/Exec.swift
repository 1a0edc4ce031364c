import ArgumentParser
import TestHosts

/// `exec NAME I CMD [ARGS...]`: becomes CMD inside host I (its network and mount namespaces); CMD's exit code.
struct Exec: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run CMD in host I: this process becomes CMD (same pid), with default signal handling.")

    @OptionGroup var target: HostArguments
    @Argument(parsing: .captureForPassthrough, help: "The command and its arguments.") var command: [String] = []

    func validate() throws {
        guard !command.isEmpty else { throw ValidationError("missing the command to run") }
    }

    func run() throws {
        try LabRequirements.checkRoot()
        try target.load().execute(command)
    }
}
