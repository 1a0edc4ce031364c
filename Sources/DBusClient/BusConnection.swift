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
    private let bus: OpaquePointer
    private let wakeup: Int32
    private let logger: Logger
    private let jobs = Mutex(Jobs())
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    /// The bus's own unique name (`:1.42`).
    public let uniqueName: String
    // On the connection's thread only (or on any thread once it ended):
    /// The bus while it is open; nil once closed.
    private var livingBus: OpaquePointer?
    private var pending: [UnsafeMutableRawPointer: CallBox] = [:]
    private var exports: [String: (slot: OpaquePointer, box: HandlerBox)] = [:]
    private var matches: [UInt: (slot: OpaquePointer, box: MatchBox)] = [:]

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
    private struct Jobs {
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
    private func perform(_ job: @escaping @Sendable (BusConnection) -> Void) {
        let ended = jobs.withLock { jobs in
            if !jobs.ended { jobs.queue.append(job) }
            return jobs.ended
        }
        if ended { job(self) } else { wake() }
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeup, &one, 8)
    }

    // MARK: - The connection's thread

    private func run() {
        var fds = [
            pollfd(fd: sd_bus_get_fd(bus), events: 0, revents: 0),
            pollfd(fd: wakeup, events: Int16(POLLIN), revents: 0),
        ]
        while !stopping.load(ordering: .acquiring) {
            for job in jobs.withLock({ jobs in
                defer { jobs.queue = [] }; return jobs.queue
            }) { job(self) }
            var processed: Int32 = 1
            while processed > 0 { processed = sd_bus_process(bus, nil) }
            if processed < 0 {
                logger.debug(
                    "the bus connection ended", metadata: ["error": "\(BusError(result: processed, "process"))"])
                break
            }
            fds[0].events = Int16(truncatingIfNeeded: sd_bus_get_events(bus))
            fds[0].revents = 0
            fds[1].revents = 0
            _ = poll(&fds, 2, pollTimeout())
            if fds[1].revents != 0 {
                var count: UInt64 = 0
                _ = read(wakeup, &count, 8)
            }
        }
        for (_, export) in exports {
            sd_bus_slot_unref(export.slot)
            Unmanaged.passUnretained(export.box).release()
        }
        exports = [:]
        for (_, match) in matches {
            sd_bus_slot_unref(match.slot)
            match.box.continuation.finish()
        }
        matches = [:]
        // Closing calls no reply callback: the calls still waiting are failed here.
        sd_bus_flush_close_unref(bus)
        let calls = pending
        pending = [:]
        for (_, box) in calls {
            box.continuation.resume(returning: .failure(BusError(.closed, message: "the bus connection was closed")))
        }
        livingBus = nil
        // Jobs that came before the end but were not run: calls among them learn that the connection is closed.
        let late = jobs.withLock { jobs in
            jobs.ended = true
            defer { jobs.queue = [] }
            return jobs.queue
        }
        for job in late { job(self) }
        finished.signal()
    }

    /// Milliseconds until sd-bus's next deadline (-1: none).
    private func pollTimeout() -> Int32 {
        var deadline: UInt64 = 0
        guard sd_bus_get_timeout(bus, &deadline) >= 0, deadline != UInt64.max else { return -1 }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
        guard deadline > nowMicroseconds else { return 0 }
        return Int32(min((deadline - nowMicroseconds + 999) / 1_000, UInt64(Int32.max)))
    }

    private func startCall(
        destination: String, path: String, interface: String, member: String, _ arguments: [BusValue],
        timeout: Duration, continuation: CheckedContinuation<Result<[BusValue], BusError>, Never>
    ) {
        guard let bus = livingBus else {
            return continuation.resume(returning: .failure(BusError(.closed, message: "the bus connection is closed")))
        }
        var message: OpaquePointer?
        do throws(BusError) {
            try check(
                sd_bus_message_new_method_call(bus, &message, destination, path, interface, member),
                "call \(interface).\(member) of \(destination)")
            defer { sd_bus_message_unref(message) }
            try BusMessage(pointer: message!).append(arguments)
            let box = CallBox(continuation: continuation, what: "\(interface).\(member)")
            box.owner = self
            let key = Unmanaged.passUnretained(box).toOpaque()
            let microseconds =
                UInt64(timeout.components.seconds) * 1_000_000
                + UInt64(timeout.components.attoseconds / 1_000_000_000_000)
            let started = sd_bus_call_async(
                bus, nil, message,
                { reply, userdata, _ in
                    guard let reply, let userdata else { return 0 }
                    let box = Unmanaged<CallBox>.fromOpaque(userdata).takeUnretainedValue()
                    box.owner?.finishCall(key: userdata, reply: reply)
                    return 0
                }, key, microseconds)
            try check(started, "call \(interface).\(member) of \(destination)")
            pending[key] = box
        } catch {
            continuation.resume(returning: .failure(error))
        }
    }

    private func finishCall(key: UnsafeMutableRawPointer, reply: OpaquePointer) {
        guard let box = pending.removeValue(forKey: key) else { return }
        if sd_bus_message_is_method_error(reply, nil) != 0 {
            let error = sd_bus_message_get_error(reply)
            let name = error?.pointee.name.map { String(cString: $0) } ?? "unknown"
            let text = error?.pointee.message.map { String(cString: $0) } ?? ""
            box.continuation.resume(
                returning: .failure(BusError(.replied, name: name, message: "\(box.what): \(name): \(text)")))
            return
        }
        box.continuation.resume(returning: Result { () throws(BusError) in try BusMessage(pointer: reply).readAll() })
    }

    private func addMatch(
        sender: String?, path: String?, interface: String?, member: String?,
        _ continuation: AsyncStream<BusSignal>.Continuation
    ) throws(BusError) -> UnsafeMutableRawPointer {
        guard let bus = livingBus else { throw BusError(.closed, message: "the bus connection is closed") }
        let box = MatchBox(continuation: continuation)
        let key = Unmanaged.passUnretained(box).toOpaque()
        var slot: OpaquePointer?
        let added = sd_bus_match_signal(
            bus, &slot, sender, path, interface, member,
            { message, userdata, _ in
                guard let message, let userdata else { return 0 }
                let box = Unmanaged<MatchBox>.fromOpaque(userdata).takeUnretainedValue()
                let string = { (pointer: UnsafePointer<CChar>?) in pointer.map { String(cString: $0) } }
                guard let arguments = try? BusMessage(pointer: message).readAll() else { return 0 }
                box.continuation.yield(
                    BusSignal(
                        path: string(sd_bus_message_get_path(message)) ?? "/",
                        interface: string(sd_bus_message_get_interface(message)) ?? "",
                        member: string(sd_bus_message_get_member(message)) ?? "", arguments: arguments,
                        sender: string(sd_bus_message_get_sender(message))))
                return 0
            }, key)
        guard added >= 0, let slot else { throw BusError(result: added, "match signals") }
        matches[UInt(bitPattern: key)] = (slot, box)
        return key
    }

    private func addExport(_ prefix: String, handler: @escaping @Sendable (BusMethodCall) -> BusReply) throws(BusError)
    {
        guard let bus = livingBus else { throw BusError(.closed, message: "the bus connection is closed") }
        guard exports[prefix] == nil else {
            throw BusError(.failed, message: "\(prefix) is exported already")
        }
        let box = HandlerBox(handler: handler, owner: self)
        var slot: OpaquePointer?
        let userdata = Unmanaged.passRetained(box).toOpaque()
        let added = sd_bus_add_fallback(
            bus, &slot, prefix,
            { message, userdata, _ in
                guard let message, let userdata else { return 0 }
                let box = Unmanaged<HandlerBox>.fromOpaque(userdata).takeUnretainedValue()
                return box.owner?.dispatch(message, to: box.handler) ?? 0
            }, userdata)
        guard added >= 0, let slot else {
            Unmanaged<HandlerBox>.fromOpaque(userdata).release()
            throw BusError(result: added, "export \(prefix)")
        }
        exports[prefix] = (slot, box)
    }

    /// Hands a method call to an exported object's handler and sends its reply; 1 when answered, 0 to let sd-bus
    /// answer "unknown method".
    private func dispatch(_ message: OpaquePointer, to handler: (BusMethodCall) -> BusReply) -> Int32 {
        let string = { (pointer: UnsafePointer<CChar>?) in pointer.map { String(cString: $0) } }
        let arguments: [BusValue]
        do throws(BusError) {
            arguments = try BusMessage(pointer: message).readAll()
        } catch {
            return reply(to: message, .error(name: "org.freedesktop.DBus.Error.InvalidArgs", message: error.message))
        }
        let call = BusMethodCall(
            path: string(sd_bus_message_get_path(message)) ?? "/",
            interface: string(sd_bus_message_get_interface(message)),
            member: string(sd_bus_message_get_member(message)) ?? "", arguments: arguments,
            sender: string(sd_bus_message_get_sender(message)))
        return reply(to: message, handler(call))
    }

    private func reply(to call: OpaquePointer, _ answer: BusReply) -> Int32 {
        switch answer {
        case .unknown:
            return 0
        case .error(let name, let text):
            var error = sd_bus_error(name: nil, message: nil, _need_free: 0)
            sd_bus_error_set(&error, name, text)
            defer { sd_bus_error_free(&error) }
            _ = sd_bus_reply_method_error(call, &error)
            return 1
        case .values(let values):
            if sd_bus_message_get_expect_reply(call) == 0 { return 1 }
            var reply: OpaquePointer?
            guard sd_bus_message_new_method_return(call, &reply) >= 0 else { return 1 }
            defer { sd_bus_message_unref(reply) }
            do throws(BusError) {
                try BusMessage(pointer: reply!).append(values)
                try check(sd_bus_send(bus, reply, nil), "send a reply")
            } catch {
                logger.debug("a reply not sent", metadata: ["error": "\(error)"])
            }
            return 1
        }
    }
}

/// A call waiting for its reply.
private final class CallBox {
    let continuation: CheckedContinuation<Result<[BusValue], BusError>, Never>
    let what: String
    weak var owner: BusConnection?

    init(continuation: CheckedContinuation<Result<[BusValue], BusError>, Never>, what: String) {
        self.continuation = continuation
        self.what = what
    }
}

/// An exported prefix's handler.
private final class HandlerBox {
    let handler: @Sendable (BusMethodCall) -> BusReply
    weak var owner: BusConnection?

    init(handler: @escaping @Sendable (BusMethodCall) -> BusReply, owner: BusConnection) {
        self.handler = handler
        self.owner = owner
    }
}

/// A signal match's stream.
private final class MatchBox {
    let continuation: AsyncStream<BusSignal>.Continuation

    init(continuation: AsyncStream<BusSignal>.Continuation) {
        self.continuation = continuation
    }
}
