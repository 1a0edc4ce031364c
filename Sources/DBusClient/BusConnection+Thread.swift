import CSystemdBus
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// What runs on the connection's thread: the poll loop, and the sd-bus callbacks of calls, exports and matches.
extension BusConnection {
    func run() {
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
    func pollTimeout() -> Int32 {
        var deadline: UInt64 = 0
        guard sd_bus_get_timeout(bus, &deadline) >= 0, deadline != UInt64.max else { return -1 }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
        guard deadline > nowMicroseconds else { return 0 }
        return Int32(min((deadline - nowMicroseconds + 999) / 1_000, UInt64(Int32.max)))
    }

    func startCall(
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

    func finishCall(key: UnsafeMutableRawPointer, reply: OpaquePointer) {
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

    func addMatch(
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

    func addExport(_ prefix: String, handler: @escaping @Sendable (BusMethodCall) -> BusReply) throws(BusError) {
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
    func dispatch(_ message: OpaquePointer, to handler: (BusMethodCall) -> BusReply) -> Int32 {
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

    func reply(to call: OpaquePointer, _ answer: BusReply) -> Int32 {
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
final class CallBox {
    let continuation: CheckedContinuation<Result<[BusValue], BusError>, Never>
    let what: String
    weak var owner: BusConnection?

    init(continuation: CheckedContinuation<Result<[BusValue], BusError>, Never>, what: String) {
        self.continuation = continuation
        self.what = what
    }
}

/// An exported prefix's handler.
final class HandlerBox {
    let handler: @Sendable (BusMethodCall) -> BusReply
    weak var owner: BusConnection?

    init(handler: @escaping @Sendable (BusMethodCall) -> BusReply, owner: BusConnection) {
        self.handler = handler
        self.owner = owner
    }
}

/// A signal match's stream.
final class MatchBox {
    let continuation: AsyncStream<BusSignal>.Continuation

    init(continuation: AsyncStream<BusSignal>.Continuation) {
        self.continuation = continuation
    }
}
