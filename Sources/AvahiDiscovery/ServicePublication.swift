import CAvahi
import Logging

/// A service registered with avahi-daemon until withdrawn.
///
/// Registration happens only while the daemon is running; on a name collision Avahi's alternative name is taken
/// ("name #2"); after a daemon restart the service is registered again by itself.
///
/// A registration that is not established within the registration timeout is withdrawn and registered again: when an
/// interface goes down and up while Avahi probes for a service's records, avahi-daemon 0.8 leaves the entry group in
/// its registering state for good (avahi/avahi#233), and the service is never announced.
public final class ServicePublication: @unchecked Sendable {
    /// Where the registration stands.
    enum Phase {
        case waiting
        case registering
        case established
        case finished
    }

    /// Renames tried before giving up on a collision.
    static let maxRenames = 32

    private let connection: AvahiConnection
    private let type: String
    private let port: UInt16
    /// Announced without probing (see ``ServiceDescription/isNameUnique``).
    private let isNameUnique: Bool
    // Guarded by the connection's lock.
    private var txt: [String: String]
    private var currentName: String
    private var group: OpaquePointer?
    private var phase = Phase.waiting
    private var renames = 0
    private var waiters: [Int: CheckedContinuation<Result<String, AvahiError>, Never>] = [:]
    private var nextWaiter = 0
    /// Waiters cancelled before they were registered.
    private var cancelledWaiters: Set<Int> = []
    private var finalError: AvahiError?
    /// How long a registration may take before it is withdrawn and registered again.
    private let registrationTimeout: Duration
    /// Fires `registrationTimeout` after a commit, on Avahi's loop thread.
    private var watchdog: OpaquePointer?
    /// Registrations started again because they did not establish in time.
    private var retries = 0

    init(connection: AvahiConnection, description: ServiceDescription, registrationTimeout: Duration) {
        self.connection = connection
        self.type = description.type
        self.port = description.port
        self.isNameUnique = description.isNameUnique
        self.txt = description.txt
        self.currentName = description.name
        self.registrationTimeout = registrationTimeout
    }

    /// The name the service is published under now (it differs from the requested one after a collision).
    public var name: String { connection.locked { currentName } }

    /// Whether the service is currently established on the network.
    public var isEstablished: Bool { connection.locked { phase == .established } }

    /// How many times the registration was started again: it did not establish in time, or was renewed.
    public var restartedRegistrations: Int { connection.locked { retries } }

    /// Waits until the service is established and returns its name; throws if registration failed for good, or
    /// (with code `closed`) when the waiting task is cancelled.
    public func established() async throws(AvahiError) -> String {
        let id = connection.locked {
            nextWaiter += 1
            return nextWaiter
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<String, AvahiError>, Never>) in
                connection.locked {
                    if let finalError {
                        continuation.resume(returning: .failure(finalError))
                    } else if phase == .established {
                        continuation.resume(returning: .success(currentName))
                    } else if cancelledWaiters.remove(id) != nil {
                        continuation.resume(returning: .failure(Self.cancelled))
                    } else {
                        waiters[id] = continuation
                    }
                }
            }
        } onCancel: {
            connection.locked {
                if let waiter = waiters.removeValue(forKey: id) {
                    waiter.resume(returning: .failure(Self.cancelled))
                } else {
                    cancelledWaiters.insert(id)
                }
            }
        }
        return try result.get()
    }

    private static let cancelled = AvahiError(.closed, message: "stopped waiting for the registration")

    /// Replaces the TXT record in place, without withdrawing the service.
    public func updateTXT(_ txt: [String: String]) async throws(AvahiError) {
        let result: Result<Void, AvahiError> = await connection.onQueue {
            self.connection.locked {
                self.txt = txt
                guard let group = self.group, self.phase == .registering || self.phase == .established else {
                    return .success(())  // used at the next registration
                }
                let list = TXTRecord.makeStringList(txt)
                defer { avahi_string_list_free(list) }
                let code = avahi_entry_group_update_service_txt_strlst(
                    group, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), AvahiPublishFlags(0),
                    self.currentName, self.type, nil, list)
                guard code >= 0 else { return .failure(AvahiError(avahiErrno: code, operation: "updating TXT record")) }
                return .success(())
            }
        }
        try result.get()
    }

    /// Removes the service from the network. Idempotent.
    public func withdraw() async {
        await connection.onQueue {
            self.connection.locked {
                self.finish(with: AvahiError(.closed, message: "service \(self.currentName) withdrawn"))
                self.connection.remove(self)
            }
        }
    }

    // MARK: - Driven by the connection, with the lock held

    /// Adds and commits the service if the group is empty.
    func register(with client: OpaquePointer) {
        guard phase != .finished else { return }
        if group == nil {
            let userdata = Unmanaged.passUnretained(self).toOpaque()
            guard let created = avahi_entry_group_new(client, entryGroupCallback, userdata) else {
                fail(AvahiError(avahiErrno: avahi_client_errno(client), operation: "creating entry group"))
                return
            }
            group = created
        }
        guard let group, avahi_entry_group_is_empty(group) != 0 else { return }
        let list = TXTRecord.makeStringList(txt)
        defer { avahi_string_list_free(list) }
        while true {
            let code =
                isNameUnique
                ? ServiceRecords.add(to: group, client: client, name: currentName, type: type, port: port, txt: list)
                : avahi_entry_group_add_service_strlst(
                    group, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), AvahiPublishFlags(0),
                    currentName, type, nil, nil, port, list)
            if code == Int32(AVAHI_ERR_COLLISION), renames < Self.maxRenames {
                // The records added before the one that collided go too, or they would point at the old name.
                avahi_entry_group_reset(group)
                rename(reason: "a local service already has that name")
                continue
            }
            guard code >= 0 else {
                fail(AvahiError(avahiErrno: code, operation: "adding service \(currentName)"))
                return
            }
            break
        }
        let code = avahi_entry_group_commit(group)
        guard code >= 0 else {
            fail(AvahiError(avahiErrno: code, operation: "committing service \(currentName)"))
            return
        }
        phase = .registering
        armWatchdog()
    }

    /// Empties the group until the daemon runs again.
    func reset() {
        guard phase != .finished else { return }
        disarmWatchdog()
        if let group { avahi_entry_group_reset(group) }
        phase = .waiting
    }

    /// The client and with it the group are gone; register again when the daemon returns.
    func connectionLost() {
        guard phase != .finished else { return }
        disarmWatchdog()
        group = nil
        phase = .waiting
    }

    /// Ends the publication: frees the group and fails every waiter with `error`.
    func finish(with error: AvahiError) {
        guard phase != .finished else { return }
        disarmWatchdog()
        if let group { avahi_entry_group_free(group) }
        group = nil
        phase = .finished
        finalError = error
        resumeWaiters(.failure(error))
    }

    // MARK: - Registration watchdog

    private func armWatchdog() {
        disarmWatchdog()
        let (seconds, attoseconds) = registrationTimeout.components
        let milliseconds = UInt32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        var deadline = timeval()
        avahi_elapse_time(&deadline, milliseconds, 0)
        let api = connection.pollAPI
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        watchdog = api.pointee.timeout_new(api, &deadline, watchdogCallback, userdata)
    }

    private func disarmWatchdog() {
        guard let watchdog else { return }
        connection.pollAPI.pointee.timeout_free(watchdog)
        self.watchdog = nil
    }

    /// The registration did not establish in time: withdraw the group and register afresh.
    fileprivate func registrationTimedOut() {
        guard phase == .registering else { return }
        restartRegistration(because: "not established after \(registrationTimeout)")
    }

    /// Frees the entry group and registers the service afresh, in a new group.
    private func restartRegistration(because reason: String) {
        disarmWatchdog()
        guard phase == .registering || phase == .established, let old = group,
            let client = avahi_entry_group_get_client(old)
        else { return }
        retries += 1
        connection.notify(.registeringAgain(currentName, reason: reason))
        avahi_entry_group_free(old)
        group = nil
        phase = .waiting
        register(with: client)
    }

    /// Registers the service again in a new entry group, for a caller that found it missing from the network
    /// although Avahi reports it established (after an interface flap, avahi-daemon 0.8 can leave a group's records
    /// unannounced on that interface for good). Does nothing while avahi-daemon is not running.
    public func renew(because reason: String) async {
        await connection.onQueue {
            self.connection.locked { self.restartRegistration(because: reason) }
        }
    }

    fileprivate func groupStateChanged(_ group: OpaquePointer, _ state: AvahiEntryGroupState) {
        guard phase != .finished, group == self.group else { return }
        switch state {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            connection.logger.debug(
                "published \(currentName)", metadata: ["type": "\(type)", "port": "\(port)", "retries": "\(retries)"])
            disarmWatchdog()
            phase = .established
            resumeWaiters(.success(currentName))
        case AVAHI_ENTRY_GROUP_COLLISION:
            guard renames < Self.maxRenames, let client = avahi_entry_group_get_client(group) else {
                fail(
                    AvahiError(
                        .collision, avahiErrno: Int32(AVAHI_ERR_COLLISION), message: "no free name for \(currentName)"))
                return
            }
            rename(reason: "another host publishes that name")
            avahi_entry_group_reset(group)
            register(with: client)
        case AVAHI_ENTRY_GROUP_FAILURE:
            let client = avahi_entry_group_get_client(group)
            let code = client.map { avahi_client_errno($0) } ?? Int32(AVAHI_ERR_FAILURE)
            fail(AvahiError(avahiErrno: code, operation: "publishing \(currentName)"))
        case AVAHI_ENTRY_GROUP_UNCOMMITED, AVAHI_ENTRY_GROUP_REGISTERING:
            break
        default:
            connection.notify(.unexpected("entry group of \(currentName) entered unknown state \(state.rawValue)"))
        }
    }

    private func rename(reason: String) {
        guard let alternative = avahi_alternative_service_name(currentName) else { return }
        let newName = String(cString: alternative)
        avahi_free(alternative)
        connection.notify(.serviceRenamed(from: currentName, to: newName, reason: reason))
        currentName = newName
        renames += 1
    }

    private func fail(_ error: AvahiError) {
        connection.notify(.failed(error))
        finish(with: error)
        connection.remove(self)
    }

    private func resumeWaiters(_ result: Result<String, AvahiError>) {
        let waiting = waiters
        waiters = [:]
        for waiter in waiting.values { waiter.resume(returning: result) }
    }
}

extension AvahiConnection {
    /// Publishes a service and waits until it is established; returns the publication, whose name may differ from
    /// the requested one after a collision.
    public func publish(
        _ description: ServiceDescription, registrationTimeout: Duration = .seconds(5)
    ) async throws(AvahiError) -> ServicePublication {
        let publication = try await register(description, registrationTimeout: registrationTimeout)
        _ = try await publication.established()
        return publication
    }

    /// Registers a service and returns at once: the registration goes on (and starts again after a daemon restart,
    /// or when it does not establish within `registrationTimeout`) until ``ServicePublication/withdraw()``.
    public func register(
        _ description: ServiceDescription, registrationTimeout: Duration = .seconds(5)
    ) async throws(AvahiError) -> ServicePublication {
        let publication = ServicePublication(
            connection: self, description: description, registrationTimeout: registrationTimeout)
        let result: Result<Void, AvahiError> = await onQueue {
            self.locked {
                guard !self.isClosed else { return .failure(AvahiError(.closed, message: "connection closed")) }
                self.add(publication)
                if let client = self.runningClient { publication.register(with: client) }
                return .success(())
            }
        }
        try result.get()
        return publication
    }
}

/// Avahi's timeout callback for the registration watchdog.
private let watchdogCallback: AvahiTimeoutCallback = { _, userdata in
    guard let userdata else { return }
    Unmanaged<ServicePublication>.fromOpaque(userdata).takeUnretainedValue().registrationTimedOut()
}

/// Avahi's entry group callback: forwards to the publication passed as userdata.
private let entryGroupCallback: AvahiEntryGroupCallback = { group, state, userdata in
    guard let group, let userdata else { return }
    Unmanaged<ServicePublication>.fromOpaque(userdata).takeUnretainedValue().groupStateChanged(group, state)
}
