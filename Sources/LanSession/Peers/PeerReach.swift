/// How a peer can be reached now, as a discovery asks it (``Session/reach(of:)``) to resolve only what it has to.
package enum PeerReach: Hashable, Sendable {
    /// A link to it carries traffic.
    case connected
    /// Not connected, but endpoints to dial are known.
    case known
    /// Nothing to dial.
    case unknown
}
