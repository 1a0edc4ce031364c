import ArgumentParser
import CBluetooth
import Foundation
import LanSession
import LanSessionRFCOMM
import SessionControl
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Round-trip percentiles of one row of the comparison, in microseconds.
struct Row: Encodable {
    var row: String
    var p50_us: Double
    var p90_us: Double
    var p99_us: Double
    var note: String?
}

func percentiles(_ row: String, _ samples: [Double]) -> Row {
    let sorted = samples.sorted()
    func at(_ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        return (sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))] * 10).rounded() / 10
    }
    return Row(row: row, p50_us: at(0.5), p90_us: at(0.9), p99_us: at(0.99))
}

/// Plain blocking sockets, for the floors the transports are compared with.
enum RawPingPong {
    static func fail(_ what: String) -> Never {
        log("\(what): \(String(cString: strerror(errno)))")
        exit(1)
    }

    static func readExactly(_ fd: Int32, _ buffer: inout [UInt8]) -> Bool {
        var offset = 0
        while offset < buffer.count {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count <= 0 { return false }
            offset += count
        }
        return true
    }

    /// Echoes 16-byte messages on `accepted` until it closes (on a thread of its own).
    static func echo(_ accepted: Int32) {
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 16)
            while readExactly(accepted, &buffer) {
                _ = buffer.withUnsafeBytes { write(accepted, $0.baseAddress, 16) }
            }
            close(accepted)
        }
    }

    /// `count` round trips of 16 bytes on a connected socket, in microseconds.
    static func measure(_ fd: Int32, count: Int) -> [Double] {
        var buffer = [UInt8](repeating: 7, count: 16)
        var samples: [Double] = []
        for index in 0..<(count + 100) {
            let start = ContinuousClock.now
            _ = buffer.withUnsafeBytes { write(fd, $0.baseAddress, 16) }
            guard readExactly(fd, &buffer) else { fail("read") }
            if index >= 100 { samples.append(Double((ContinuousClock.now - start) / .nanoseconds(1)) / 1_000) }
        }
        close(fd)
        return samples
    }

    static func tcp(count: Int) -> [Double] {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                _ = bind(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        listen(server, 1)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(server, $0, &length) }
        }
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { fail("tcp connect") }
        let accepted = accept(server, nil, nil)
        setsockopt(accepted, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        echo(accepted)
        defer { close(server) }
        return measure(client, count: count)
    }

    static func rfcomm(count: Int, from client: String, to server: String, channel: UInt8) -> [Double] {
        let listener = socket(AF_BLUETOOTH, Int32(SOCK_STREAM.rawValue), BTPROTO_RFCOMM)
        var local = sockaddr_rc()
        local.rc_family = sa_family_t(AF_BLUETOOTH)
        local.rc_channel = channel
        str2ba(server, &local.rc_bdaddr)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_rc>.size))
            }
        }
        guard bound == 0, listen(listener, 1) == 0 else { fail("rfcomm listen") }
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_STREAM.rawValue), BTPROTO_RFCOMM)
        var source = sockaddr_rc()
        source.rc_family = sa_family_t(AF_BLUETOOTH)
        str2ba(client, &source.rc_bdaddr)
        withUnsafePointer(to: &source) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                _ = bind(fd, $0, socklen_t(MemoryLayout<sockaddr_rc>.size))
            }
        }
        var remote = local
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_rc>.size))
            }
        }
        guard connected == 0 else { fail("rfcomm connect") }
        let accepted = accept(listener, nil, nil)
        echo(accepted)
        defer { close(listener) }
        return measure(fd, count: count)
    }
}

extension RawPingPong {
    /// `count` round trips over an LE L2CAP channel (LE CoC) from `client` to `server`'s `psm`, echoed on `server`;
    /// each message is one SDU. `server` must advertise (connectable) for the kernel to connect to it.
    static func le(count: Int, from client: String, to server: String, psm: UInt16) -> [Double] {
        func address(_ text: String, psm: UInt16) -> sockaddr_l2 {
            var address = sockaddr_l2()
            address.l2_family = sa_family_t(AF_BLUETOOTH)
            address.l2_psm = psm.littleEndian
            str2ba(text, &address.l2_bdaddr)
            address.l2_bdaddr_type = UInt8(BDADDR_LE_PUBLIC)
            return address
        }
        func call(
            _ function: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Int32, _ fd: Int32, _ address: sockaddr_l2
        )
            -> Int32
        {
            var address = address
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    function(fd, $0, socklen_t(MemoryLayout<sockaddr_l2>.size))
                }
            }
        }
        let listener = socket(AF_BLUETOOTH, Int32(SOCK_SEQPACKET.rawValue), BTPROTO_L2CAP)
        guard call(bind, listener, address(server, psm: psm)) == 0, listen(listener, 1) == 0 else {
            fail("le listen")
        }
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_SEQPACKET.rawValue), BTPROTO_L2CAP)
        guard call(bind, fd, address(client, psm: 0)) == 0 else { fail("le bind") }
        guard call(connect, fd, address(server, psm: psm)) == 0 else { fail("le connect") }
        let accepted = accept(listener, nil, nil)
        echo(accepted)
        defer { close(listener) }
        return measure(fd, count: count)
    }
}
