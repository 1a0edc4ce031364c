import ArgumentParser
import TestHosts

/// `addr NAME I [NET]`: host I's IPv4 address on network NET.
struct Addr: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print host I's IPv4 address on network NET (1, the default, or 2).")

    @OptionGroup var target: HostArguments
    @Argument(help: "The network, 1 or 2.") var network = NetworkNumber.one

    func run() throws {
        print(try target.load().address(network: network.rawValue))
    }
}
