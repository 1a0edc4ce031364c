import Synchronization

/// Where the page is served, once it is: the address with the token (what `session-client web` prints) and what it
/// listens on. Set once at the start, read by the control socket.
final class PageLocation: Sendable {
    struct Location: Sendable {
        let url: String
        let listening: String
    }

    private let location = Mutex<Location?>(nil)

    var current: Location? { location.withLock { $0 } }

    func set(url: String, listening: String) {
        location.withLock { $0 = Location(url: url, listening: listening) }
    }
}
