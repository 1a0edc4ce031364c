import ArgumentParser
import Foundation
import SessionControl

/// The options every command accepts: where the daemon's socket is and whether to print JSON.
struct GlobalOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The daemon's control socket (default: $LANSESSION_CONTROL, else the per-user runtime path).",
            valueName: "path"
        )
    )
    var control: String?

    @Flag(help: "Print the daemon's JSON result instead of text (streams: one JSON object per line).")
    var json = false

    /// The socket to connect to.
    var socketPath: String {
        control ?? ControlSocket.defaultPath(environment: ProcessInfo.processInfo.environment, uid: getuid())
    }

    func validate() throws {
        if let control, control.isEmpty { throw ValidationError("--control needs a non-empty path") }
    }

    /// Opens a connection to the daemon.
    func connect() throws(ClientError) -> Daemon {
        try Daemon(path: socketPath)
    }
}
