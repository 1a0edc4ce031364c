import ArgumentParser
import TestHosts

extension HostAvahi.Action: ExpressibleByArgument {}

/// `avahi NAME I stop|start|restart`: waits until done.
struct Avahi: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stop, start or restart host I's avahi-daemon; wait until it is stopped or runs.")

    @OptionGroup var target: HostArguments
    @Argument(help: "stop, start or restart.") var action: HostAvahi.Action

    func run() throws {
        try LabRequirements.checkRoot()
        try HostAvahi(target.load()).perform(action)
    }
}
