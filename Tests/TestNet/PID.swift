import ArgumentParser
import TestHosts

/// `pid NAME I`: the holder's pid (`nsenter -t PID -n -m` enters the host).
struct PID: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pid", abstract: "Print the pid of host I's holder (nsenter -t PID -n -m enters the host).")

    @OptionGroup var target: HostArguments

    func run() throws {
        print(try target.load().holderPID())
    }
}
