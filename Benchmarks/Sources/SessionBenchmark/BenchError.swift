/// A benchmark that could not run as intended, with what went wrong.
struct BenchError: Error, CustomStringConvertible {
    /// What went wrong, in one line.
    let description: String

    /// Creates an error with its message.
    init(_ description: String) {
        self.description = description
    }
}
