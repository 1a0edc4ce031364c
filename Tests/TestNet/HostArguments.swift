import ArgumentParser
import TestHosts

/// The lab and host a command acts on: `NAME I`.
struct HostArguments: ParsableArguments {
    @Argument(help: "The lab's name, as `up` printed it.") var name: String
    @Argument(help: "The host's number, from 1.") var host: String

    /// A bad lab name is a bad argument (exit 2); a lab or host that does not exist, a failure (exit 1).
    func validate() throws {
        try TestHostLayout.checkName(name)
    }

    /// The host, from the lab's state.
    func load() throws(TestHostError) -> LabHost {
        try LabHost(lab: name, host: host)
    }
}
