import ArgumentParser
import TestHosts

/// `down NAME`: tears the lab down; idempotent.
struct Down: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Tear lab NAME down (idempotent).")

    @Argument(help: "The lab's name.") var name: String

    func validate() throws {
        try TestHostLayout.checkName(name)
    }

    func run() throws {
        try LabRequirements.checkRoot()
        try LabTeardown.down(name)
    }
}
