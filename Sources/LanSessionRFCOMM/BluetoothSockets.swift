import CBluetooth
import LanSession
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// What the Bluetooth transports (RFCOMM here, LE L2CAP in LanSessionLE) share below ``BluetoothSocketTransport``:
/// addresses in text, errors with errno's text, the peer's address of a connected socket, and a dial's connect, which
/// the kernel completes while the loop looks every few milliseconds before handing the socket to SwiftNIO.
package enum BluetoothSockets {
    /// "AA:BB:CC:DD:EE:FF" as BlueZ's `bdaddr_t`.
    package static func address(_ text: String) throws(SessionError) -> bdaddr_t {
        var address = bdaddr_t()
        guard text.utf8.count == 17, str2ba(text, &address) == 0 else {
            throw SessionError(.invalidArgument, "\(text) is not a Bluetooth address (AA:BB:CC:DD:EE:FF)")
        }
        return address
    }

    /// A `bdaddr_t` as "AA:BB:CC:DD:EE:FF".
    package static func string(_ address: bdaddr_t) -> String {
        var address = address
        var text = [CChar](repeating: 0, count: 18)
        ba2str(&address, &text)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `what` failed: errno's text.
    package static func error(_ what: String) -> SessionError {
        let code = errno
        return SessionError(.io, "cannot \(what): \(String(cString: strerror(code)))")
    }

    /// `bind(2)` or `connect(2)` of `fd` to `address`, a `sockaddr_rc` or `sockaddr_l2`.
    package static func call<Address>(
        _ function: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32, _ fd: Int32, _ address: Address
    ) -> Int32 {
        var address = address
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                function(fd, $0, socklen_t(MemoryLayout<Address>.size))
            }
        }
    }

    /// Starts the non-blocking connect of `fd` to `address` (the kernel completes it: see ``completeConnect``); closes
    /// `fd` when the kernel refuses at once.
    package static func startConnect<Address>(_ fd: Int32, to address: Address, endpoint: Endpoint) throws(SessionError)
    {
        let result = call(Glibc.connect, fd, address)
        guard result == 0 || errno == EINPROGRESS || errno == EAGAIN else {
            let failure = error("connect to \(endpoint)")
            close(fd)
            throw failure
        }
    }

    /// Waits for the non-blocking connect of `fd` to `endpoint` to complete (polling every 2 ms, up to `timeout`),
    /// then adopts the socket with `adopt`. The socket is closed on failure.
    package static func completeConnect(
        _ fd: Int32, to endpoint: Endpoint, transport: String, timeout: Duration, on loop: any EventLoop,
        adopt: @escaping @Sendable (Int32) -> EventLoopFuture<any Channel>
    ) -> EventLoopFuture<any Channel> {
        let promise = loop.makePromise(of: (any Channel).self)
        let deadline = NIODeadline.now() + TimeAmount.nanoseconds(Int64(timeout / .nanoseconds(1)))
        let poller = loop.scheduleRepeatedTask(initialDelay: .milliseconds(2), delay: .milliseconds(2)) { task in
            var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&entry, 1, 0)
            guard ready > 0 else {
                if NIODeadline.now() > deadline {
                    task.cancel()
                    close(fd)
                    promise.fail(
                        SessionError(.timedOut, "no \(transport) connection to \(endpoint) within the timeout"))
                }
                return
            }
            task.cancel()
            var code: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length)
            guard code == 0 else {
                close(fd)
                promise.fail(
                    SessionError(
                        .io, "\(transport) connection to \(endpoint) failed: \(String(cString: strerror(code)))"))
                return
            }
            adopt(fd).cascade(to: promise)
        }
        promise.futureResult.whenComplete { _ in poller.cancel() }
        return promise.futureResult
    }

    /// Reads the peer's address of an adopted socket (SO_PEERNAME: an `Address`, `sockaddr_rc` or `sockaddr_l2`, of
    /// which `adapter` reads the adapter's address), keeps it in the pipeline, then goes on with `next`.
    package static func adopt<Address: Sendable>(
        _ channel: any Channel, peer adapter: @escaping @Sendable (Address) -> bdaddr_t,
        then next: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> EventLoopFuture<Void> {
        guard let options = channel as? any SocketOptionProvider else { return next(channel) }
        let peer: EventLoopFuture<Address> = options.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERNAME))
        return peer.flatMapThrowing { remote in
            try channel.pipeline.syncOperations.addHandler(RemoteAddressHandler(address: string(adapter(remote))))
        }
        .flatMap { next(channel) }
    }

    /// Remembers the remote adapter's address of a Bluetooth channel (SwiftNIO knows only IP and Unix addresses).
    package final class RemoteAddressHandler: ChannelInboundHandler, RemovableChannelHandler {
        package typealias InboundIn = NIOAny
        package let address: String
        package init(address: String) { self.address = address }
    }

    /// The remote adapter's address kept by ``RemoteAddressHandler``.
    package static func remoteAddress(of channel: any Channel) -> String? {
        try? channel.pipeline.syncOperations.handler(type: RemoteAddressHandler.self).address
    }
}
