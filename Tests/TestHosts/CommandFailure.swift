/// A command that could not be started, ran too long, or exited with a status other than 0.
public struct CommandFailure: Error, CustomStringConvertible, Equatable {
    /// The command and its arguments.
    public var command: [String]
    /// Its exit status (128 + the signal when a signal ended it); -1 when it could not be started.
    public var status: Int32
    /// What it wrote on stderr (or why it could not be started).
    public var stderr: String

    /// Creates a failure.
    public init(command: [String], status: Int32, stderr: String) {
        self.command = command
        self.status = status
        self.stderr = stderr
    }

    public var description: String {
        let text = stderr.split(separator: "\n").last.map(String.init) ?? ""
        return "\(command.joined(separator: " ")) failed (exit \(status))" + (text.isEmpty ? "" : ": \(text)")
    }
}
