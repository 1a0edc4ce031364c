import ArgumentParser
import TestHosts

/// `list`: the labs that are up, one per line.
struct List: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the names of the labs that are up, one per line.")

    func run() throws {
        for name in LabListing.names() { print(name) }
    }
}
