import CAvahi
import Dispatch
import Logging

/// A connection to the local avahi-daemon, running Avahi's threaded event loop.
///
/// Publishing and browsing go through one connection. When avahi-daemon restarts, the connection reconnects by itself
/// (`AVAHI_CLIENT_NO_FAIL`), registers every publication again and restarts every browser.
///
/// Concurrency: Avahi runs its callbacks on its own thread with the poll lock held. Every mutable property of this
/// class and of the objects it owns is accessed only with that lock held; calls that may block on D-Bus run on a
/// private serial queue, never on the cooperative thread pool.
public final class AvahiConnection: @unchecked Sendable {
    /// Where the connection to avahi-daemon stands.
    public enum State: Hashable, Sendable {
        /// Waiting for avahi-daemon to (re)appear.
        case connecting
        /// The daemon is registering its host name; publications wait.
        case registering
        /// The daemon's host name collided; publications wait for the daemon to rename.
        case collision
        /// Publishing and browsing work.
        case running
        /// The connection failed for good.
        case failed(AvahiError)
        /// ``close()`` was called.
        case closed
    }

    let logger: Logger
    /// Told what an operator may want to know; on Avahi's thread, with the lock held: it must not block or call back.
    let report: @Sendable (AvahiNotice) -> Void
    let queue = DispatchQueue(label: "lansession.avahi")
    private let poll: OpaquePointer
    private var client: OpaquePointer?
    private var stateValue: State = .connecting
    private var publications: [ObjectIdentifier: ServicePublication] = [:]
    private(set) var browsers: [ObjectIdentifier: BrowserState] = [:]

    private init(logger: Logger, report: @escaping @Sendable (AvahiNotice) -> Void) {
        self.logger = logger
        self.report = report
        self.poll = avahi_threaded_poll_new()
    }

    deinit {
        avahi_threaded_poll_stop(poll)
        if let client { avahi_client_free(client) }
        avahi_threaded_poll_free(poll)
    }

    /// Connects to avahi-daemon; fails at once with `daemonNotRunning` when it is not there. What an operator may
    /// want to know later (the daemon lost, a name collision) goes to `report` (the module itself logs at debug).
    public static func connect(
        logger: Logger = Logger(label: "lansession.avahi"), report: @escaping @Sendable (AvahiNotice) -> Void = { _ in }
    ) async throws(AvahiError)
        -> AvahiConnection
    {
        let connection = AvahiConnection(logger: logger, report: report)
        let result = await connection.onQueue { connection.start() }
        try result.get()
        return connection
    }

    /// Where the connection stands now.
    public var state: State { locked { stateValue } }

    /// The daemon's host name, e.g. "host-1", while running.
    public var hostName: String? {
        locked {
            guard let client, let name = avahi_client_get_host_name(client) else { return nil }
            return String(cString: name)
        }
    }

    /// Withdraws every publication, ends every browser and disconnects.
    public func close() async {
        await onQueue {
            self.locked {
                self.stateValue = .closed
                for publication in self.publications.values {
                    publication.finish(with: AvahiError(.closed, message: "connection closed"))
                }
                for browser in self.browsers.values { browser.finish() }
                self.publications = [:]
                self.browsers = [:]
            }
            avahi_threaded_poll_stop(self.poll)
            if let client = self.client {
                avahi_client_free(client)
                self.client = nil
            }
        }
    }

    // MARK: - Internals shared with publications and browsers

    /// Runs `body` with the poll lock held. Never call from an Avahi callback (the lock is already held there).
    func locked<T>(_ body: () throws -> T) rethrows -> T {
        avahi_threaded_poll_lock(poll)
        defer { avahi_threaded_poll_unlock(poll) }
        return try body()
    }

    /// Runs `body` on the private queue, off the cooperative thread pool.
    func onQueue<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: body()) }
        }
    }

    /// Avahi's poll API of the connection's event loop, for timeouts on its thread.
    var pollAPI: UnsafePointer<AvahiPoll> { avahi_threaded_poll_get(poll) }

    /// The client while the daemon is running; call with the lock held.
    var runningClient: OpaquePointer? {
        if case .running = stateValue { return client }
        return nil
    }

    var isClosed: Bool {
        if case .closed = stateValue { return true }
        return false
    }

    func add(_ publication: ServicePublication) {
        publications[ObjectIdentifier(publication)] = publication
    }

    func remove(_ publication: ServicePublication) {
        publications[ObjectIdentifier(publication)] = nil
    }

    func add(_ browser: BrowserState) {
        browsers[ObjectIdentifier(browser)] = browser
    }

    func remove(_ browser: BrowserState) {
        browsers[ObjectIdentifier(browser)] = nil
    }

    // MARK: - Client lifecycle

    /// Creates the client and starts the event loop; runs on the queue before the loop thread exists.
    private func start() -> Result<Void, AvahiError> {
        var error: Int32 = 0
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        guard
            let client = avahi_client_new(
                avahi_threaded_poll_get(poll), AVAHI_CLIENT_NO_FAIL, clientCallback, userdata, &error)
        else {
            return .failure(AvahiError(avahiErrno: error, operation: "connecting to avahi-daemon"))
        }
        if avahi_client_get_state(client) == AVAHI_CLIENT_CONNECTING {
            avahi_client_free(client)
            self.client = nil  // the state callback has already seen it
            return .failure(AvahiError(avahiErrno: Int32(AVAHI_ERR_NO_DAEMON), operation: "connecting to avahi-daemon"))
        }
        self.client = client
        guard avahi_threaded_poll_start(poll) >= 0 else {
            avahi_client_free(client)
            self.client = nil
            return .failure(AvahiError(.failure, message: "could not start Avahi's event loop thread"))
        }
        return .success(())
    }

    /// Logs `notice` at debug and reports it.
    func notify(_ notice: AvahiNotice) {
        logger.debug("\(notice)")
        report(notice)
    }

    /// Handles a client state change; runs on the loop thread with the lock held.
    fileprivate func clientStateChanged(_ client: OpaquePointer, _ state: AvahiClientState) {
        guard !isClosed else { return }
        self.client = client
        switch state {
        case AVAHI_CLIENT_S_RUNNING:
            logger.debug("avahi-daemon running")
            stateValue = .running
            for publication in publications.values { publication.register(with: client) }
            for browser in browsers.values { browser.start(with: client) }
        case AVAHI_CLIENT_S_REGISTERING:
            stateValue = .registering
            for publication in publications.values { publication.reset() }
        case AVAHI_CLIENT_S_COLLISION:
            notify(.hostNameCollision)
            stateValue = .collision
            for publication in publications.values { publication.reset() }
        case AVAHI_CLIENT_CONNECTING:
            logger.debug("waiting for avahi-daemon")
            stateValue = .connecting
        case AVAHI_CLIENT_FAILURE:
            let code = avahi_client_errno(client)
            let error = AvahiError(avahiErrno: code, operation: "avahi-daemon connection")
            // Avahi frees every group, browser and resolver with the client: forget them first.
            for publication in publications.values { publication.connectionLost() }
            for browser in browsers.values { browser.connectionLost(error) }
            avahi_client_free(client)
            self.client = nil
            guard code == Int32(AVAHI_ERR_DISCONNECTED) else {
                notify(.failed(error))
                stateValue = .failed(error)
                for publication in publications.values { publication.finish(with: error) }
                for browser in browsers.values { browser.finish() }
                publications = [:]
                browsers = [:]
                return
            }
            notify(.daemonLost)
            stateValue = .connecting
            var reconnectError: Int32 = 0
            let userdata = Unmanaged.passUnretained(self).toOpaque()
            let replacement = avahi_client_new(
                avahi_threaded_poll_get(poll), AVAHI_CLIENT_NO_FAIL, clientCallback, userdata, &reconnectError)
            if let replacement {
                self.client = replacement
            } else {
                let failure = AvahiError(avahiErrno: reconnectError, operation: "reconnecting to avahi-daemon")
                notify(.failed(failure))
                stateValue = .failed(failure)
            }
        default:
            notify(.unexpected("avahi client entered unknown state \(state.rawValue)"))
        }
    }
}

/// Avahi's client callback: forwards to the connection passed as userdata.
private let clientCallback: AvahiClientCallback = { client, state, userdata in
    guard let client, let userdata else { return }
    Unmanaged<AvahiConnection>.fromOpaque(userdata).takeUnretainedValue().clientStateChanged(client, state)
}
