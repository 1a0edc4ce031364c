import LanSession

extension ControlDispatcher {
    /// The entries of every table the daemon keeps, by name: the session's (``Session/tableSizes()``), the event hub's
    /// (its `watch` connections and the lines waiting for them, its streams and observers), the `streams` clients, and
    /// with `control` and `page` the control connections and the open pages. For tests and diagnostics: each comes back
    /// to what it was once its keys are gone.
    func tableSizes(control: ControlServer? = nil, page: PageServer? = nil) async -> [String: Int] {
        var sizes = (try? await session.tableSizes()) ?? [:]
        sizes.merge(await hub.tableSizes()) { $1 }
        sizes["streamListeners"] = desk.listenerCount
        if let control { sizes["controlConnections"] = control.connectionCount }
        if let page { sizes["pages"] = page.pageCount }
        return sizes
    }
}
