/// A program that could not be started, or that ended with a status other than 0 or by a signal.
struct SubprocessError: Error, CustomStringConvertible {
    enum Reason: Sendable {
        /// It did not start (not found, not executable, no permission): the system's words.
        case notStarted(String)
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32)
    }

    /// The program and its arguments.
    var command: [String]
    var reason: Reason
    /// The end of what it wrote to stderr, when that was captured.
    var standardError = ""

    var description: String {
        let what = command.joined(separator: " ")
        let tail =
            standardError.isEmpty ? "" : ": " + standardError.split(separator: "\n").suffix(3).joined(separator: " / ")
        switch reason {
        case .notStarted(let why): return "cannot run \(what): \(why)"
        case .exited(let status): return "\(what) exited with status \(status)\(tail)"
        case .signalled(let signal): return "\(what) ended by signal \(signal)\(tail)"
        }
    }
}
