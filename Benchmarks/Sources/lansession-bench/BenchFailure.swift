/// Why a benchmark could not finish: one line for stderr, exit status 1.
struct BenchFailure: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) { self.description = description }

    /// A subcommand whose port to this tool is still to come.
    static func notYet(_ subcommand: String) -> BenchFailure {
        BenchFailure("\(subcommand) is not yet part of this tool")
    }
}
