import CSystemdBus
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A connection to a D-Bus bus through sd-bus (libsystemd), run on a thread of its own.
///
/// sd-bus is not thread-safe: the bus, its messages and every callback live on the connection's thread, which polls
/// the bus's socket and an eventfd that wakes it for work from other threads (``perform(_:)``). Calls are async;
/// exported objects answer on that thread, so their handlers must not block. This module is the only place that
/// touches sd-bus's pointers.
public final class BusConnection: @unchecked Sendable {
    let bus: OpaquePointer
    let wakeup: Int32
    let logger: Logger
    let jobs = Mutex(Jobs())
    let stopping = Atomic<Bool>(false)
    let finished = DispatchSemaphore(value: 0)
    /// The bus's own unique name (`:1.42`).
    public let uniqueName: String
    // On the connection's thread only (or on any thread once it ended):
    /// The bus while it is open; nil once closed.
    var livingBus: OpaquePointer?
    var pending: [UnsafeMutableRawPointer: CallBox] = [:]
    var exports: [String: (slot: OpaquePointer, box: HandlerBox)] = [:]
    var matches: [UInt: (slot: OpaquePointer, box: MatchBox)] = [:]

    private init(bus: OpaquePointer, logger: Logger) throws(BusError) {
        self.bus = bus
        self.livingBus = bus
        self.logger = logger
        var name: UnsafePointer<CChar>?
        try check(sd_bus_get_unique_name(bus, &name), "ask the bus for this connection's name")
        uniqueName = name.map { String(cString: $0) } ?? "?"
        let fd = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard fd >= 0 else {
            sd_bus_flush_close_unref(bus)
            throw BusError(
                .failed, errno: errno, message: "cannot make an eventfd: \(String(cString: strerror(errno)))")
        }
        wakeup = fd
        // The thread holds the connection until it ends (``close()``).
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { argument in
                Unmanaged<BusConnection>.fromOpaque(argument!).takeRetainedValue().run()
                return nil
            }, Unmanaged.passRetained(self).toOpaque())
        guard started == 0 else {
            sd_bus_flush_close_unref(bus)
            Glibc.close(fd)
            throw BusError(.failed, errno: started, message: "cannot start the bus thread: errno \(started)")
        }
        pthread_detach(thread)
    }

    /// Work for the connection's thread, and whether the thread ended (work that comes later runs where it is given,
    /// and finds the bus closed).
    struct Jobs {
        var queue: [@Sendable (BusConnection) -> Void] = []
        var ended = false
    }

    deinit {
        Glibc.close(wakeup)
    }

    /// Connects to the system bus (`DBUS_SYSTEM_BUS_ADDRESS`, or /run/dbus/system_bus_socket).
    public static func system(logger: Logger) throws(BusError) -> BusConnection {
        var bus: OpaquePointer?
        try check(sd_bus_open_system(&bus), "connect to the system bus")
        return try BusConnection(bus: bus!, logger: logger)
    }

    /// Connects to the bus at `address` (`unix:path=/run/…`) as a bus client.
    public static func connect(address: String, logger: Logger) throws(BusError) -> BusConnection {
        var bus: OpaquePointer?
        try check(sd_bus_new(&bus), "make a bus")
        do throws(BusError) {
            try check(address.withCString { sd_bus_set_address(bus, $0) }, "set the bus address \(address)")
            try check(sd_bus_set_bus_client(bus, 1), "make the bus a client")
            try check(sd_bus_start(bus), "connect to \(address)")
        } catch {
            sd_bus_unref(bus)
            throw error
        }
        return try BusConnection(bus: bus!, logger: logger)
    }

    /// Stops the thread, fails the calls still waiting for replies, withdraws every exported object and closes the
    /// connection (what was sent is flushed first). Blocks until the thread ended.
    public func close() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wake()
        finished.wait()
    }

    // MARK: - Calls, objects, signals

    /// Calls `member` of `interface` on `path` of `destination` with `arguments`; the reply's values, or the error it
    /// replied with (``BusError/Code/replied``, its name in ``BusError/name``).
    public func call(
        destination: String, path: String, interface: String, member: String, _ arguments: [BusValue] = [],
        timeout: Duration = .seconds(25)
    ) async throws(BusError) -> [BusValue] {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<[BusValue], BusError>, Never>) in
            perform { connection in
                connection.startCall(
                    destination: destination, path: path, interface: interface, member: member, arguments,
                    timeout: timeout, continuation: continuation)
            }
        }
        return try result.get()
    }

    /// Whether `name` (`org.bluez`) has an owner on the bus: whether that service runs.
    public func nameHasOwner(_ name: String) async throws(BusError) -> Bool {
        let reply = try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "NameHasOwner", [.string(name)])
        return reply.first?.booleanValue ?? false
    }

    /// Answers, with `handler` on the connection's thread, every method call to `prefix` or any path below it, until
    /// ``withdraw(_:)``. The handler must not block.
    public func export(
        _ prefix: String, handler: @escaping @Sendable (BusMethodCall) -> BusReply
    ) async throws(BusError) {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<Void, BusError>, Never>) in
            perform { connection in
                continuation.resume(
                    returning: Result { () throws(BusError) in
                        try connection.addExport(prefix, handler: handler)
                    })
            }
        }
        try result.get()
    }

    /// Stops answering calls to `prefix` (exported with ``export(_:handler:)``); calls that come after it returned get
    /// D-Bus's "unknown object" error.
    public func withdraw(_ prefix: String) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            perform { connection in
                if connection.livingBus != nil, let (slot, box) = connection.exports.removeValue(forKey: prefix) {
                    sd_bus_slot_unref(slot)
                    Unmanaged.passUnretained(box).release()
                }
                done.resume()
            }
        }
    }

    /// Takes `name` (`org.bluez`) on the bus for this connection; fails when another connection owns it.
    public func requestName(_ name: String) async throws(BusError) {
        let reply = try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RequestName", [.string(name), .uint32(4)])  // DBUS_NAME_FLAG_DO_NOT_QUEUE
        // 1: now its primary owner; 4: it was already.
        guard let result = reply.first?.integerValue, result == 1 || result == 4 else {
            throw BusError(.failed, message: "the name \(name) is owned by another connection")
        }
    }

    /// The signals that match every one of the given fields (nil: any), from the moment the match is in place until
    /// the stream's consumer stops.
    public func signals(
        sender: String? = nil, path: String? = nil, interface: String? = nil, member: String? = nil
    ) async throws(BusError) -> AsyncStream<BusSignal> {
        let (stream, continuation) = AsyncStream.makeStream(of: BusSignal.self, bufferingPolicy: .bufferingNewest(1024))
        let result = await withCheckedContinuation {
            (added: CheckedContinuation<Result<UnsafeMutableRawPointer, BusError>, Never>) in
            perform { connection in
                added.resume(
                    returning: Result { () throws(BusError) in
                        try connection.addMatch(
                            sender: sender, path: path, interface: interface, member: member, continuation)
                    })
            }
        }
        let key = try result.get()
        let address = UInt(bitPattern: key)
        continuation.onTermination = { [weak self] _ in
            self?.perform { connection in
                guard let match = connection.matches.removeValue(forKey: address) else { return }
                if connection.livingBus != nil { sd_bus_slot_unref(match.slot) }
            }
        }
        return stream
    }

    /// Emits the signal `member` of `interface` from `path` with `arguments`.
    public func emitSignal(path: String, interface: String, member: String, _ arguments: [BusValue]) {
        perform { connection in
            guard let bus = connection.livingBus else { return }
            do throws(BusError) {
                var message: OpaquePointer?
                try check(
                    sd_bus_message_new_signal(bus, &message, path, interface, member),
                    "make the signal \(interface).\(member)")
                defer { sd_bus_message_unref(message) }
                try BusMessage(pointer: message!).append(arguments)
                try check(sd_bus_send(bus, message, nil), "send the signal \(interface).\(member)")
            } catch {
                connection.logger.debug("a signal not sent", metadata: ["path": "\(path)", "error": "\(error)"])
            }
        }
    }

    /// Emits `org.freedesktop.DBus.Properties.PropertiesChanged` for `interface` of the object at `path`.
    public func emitPropertiesChanged(path: String, interface: String, _ changed: [(String, BusValue)]) {
        emitSignal(
            path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            [.string(interface), .properties(changed), .strings([])])
    }

    /// Runs `job` on the connection's thread, where sd-bus may be used.
    func perform(_ job: @escaping @Sendable (BusConnection) -> Void) {
        let ended = jobs.withLock { jobs in
            if !jobs.ended { jobs.queue.append(job) }
            return jobs.ended
        }
        if ended { job(self) } else { wake() }
    }

    func wake() {
        var one: UInt64 = 1
        _ = write(wakeup, &one, 8)
    }
}
