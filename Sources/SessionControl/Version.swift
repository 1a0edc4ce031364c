/// The version of sessiond and session-client, printed by `--version`.
public enum LanSessionVersion {
    /// The release both tools belong to.
    public static let current = "0.14.0"
}
