/// Where the control socket is, and the limits of its protocol.
public enum ControlSocket {
    /// The longest request line accepted, in bytes; a longer one closes the connection.
    public static let maxLineLength = 128 * 1024

    /// The default socket path: LANSESSION_CONTROL if set; for root /run/lansession/sessiond.sock; otherwise
    /// $XDG_RUNTIME_DIR/lansession/sessiond.sock (or /tmp/lansession-UID/sessiond.sock without XDG_RUNTIME_DIR).
    public static func defaultPath(environment: [String: String], uid: UInt32) -> String {
        if let path = environment["LANSESSION_CONTROL"], !path.isEmpty { return path }
        if uid == 0 { return "/run/lansession/sessiond.sock" }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return runtime + "/lansession/sessiond.sock"
        }
        return "/tmp/lansession-\(uid)/sessiond.sock"
    }
}
