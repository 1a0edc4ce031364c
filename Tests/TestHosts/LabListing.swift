/// The labs that are up: those with a state directory, and those whose state is gone but whose namespaces remain
/// (listed so that they can be taken down).
public enum LabListing {
    /// The names of the labs, sorted, each once.
    public static func names() -> [String] {
        let orphans = NetworkNamespace.names().compactMap { TestHostLayout.labName(switchNamespace: $0) }
        return Set(LabStateDirectory.labNames() + orphans).sorted()
    }
}
