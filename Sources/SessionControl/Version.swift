import CLanSessionVersion

/// The version of sessiond and session-client, printed by `--version` and reported by `status`.
public enum LanSessionVersion {
    /// The release both tools belong to: the tree's, or the one its package was built as (scripts/package).
    public static let current = String(cString: lansession_version())
}
