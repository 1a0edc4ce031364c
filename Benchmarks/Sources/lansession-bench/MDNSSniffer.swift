import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Counts the mDNS packets crossing a lab's switch: a packet socket on its bridge, made in the switch's network
/// namespace, that only receives, never sends. Every IPv4 UDP frame to or from port 5353 that the bridge floods is
/// kept as (wall-clock time, query or response, bytes) until ``stop()``.
final class MDNSSniffer: Sendable {
    struct Packet: Sendable {
        var nanoseconds: UInt64
        var response: Bool
        var bytes: Int
    }

    private let packets = Mutex<[Packet]>([])
    private let running = Atomic<Bool>(true)
    private let ended = DispatchSemaphore(value: 0)

    /// Starts counting on `bridge` in the network namespace at `namespace` (/run/netns/LAB-sw); throws when the
    /// socket cannot be made there.
    init(namespace: String, bridge: String) throws {
        let opened = Mutex<(any Error)?>(nil)
        let ready = DispatchSemaphore(value: 0)
        NetworkNamespace.start(at: namespace) { [self] entered in
            var fd: Int32 = -1
            do {
                try entered.get()
                fd = try Self.packetSocket(bridge)
            } catch {
                opened.withLock { $0 = error }
            }
            ready.signal()
            guard fd >= 0 else {
                ended.signal()
                return
            }
            read(fd)
            close(fd)
            ended.signal()
        }
        ready.wait()
        if let error = opened.withLock({ $0 }) { throw error }
    }

    /// Stops counting and returns what was counted (later calls return the same).
    func stop() -> [Packet] {
        if running.exchange(false, ordering: .acquiringAndReleasing) { ended.wait() }
        return packets.withLock { $0 }
    }

    private static func packetSocket(_ bridge: String) throws -> Int32 {
        let all = UInt16(0x0003).bigEndian  // ETH_P_ALL
        let fd = socket(AF_PACKET, Int32(SOCK_RAW.rawValue), Int32(all))
        guard fd >= 0 else { throw BenchFailure("packet socket: \(String(cString: strerror(errno)))") }
        // struct sockaddr_ll (linux/if_packet.h, 20 bytes): family, protocol (network order), interface index, the
        // rest zero.
        var address = [UInt8](repeating: 0, count: 20)
        let index = Int32(if_nametoindex(bridge))
        withUnsafeBytes(of: UInt16(AF_PACKET)) { address.replaceSubrange(0..<2, with: $0) }
        withUnsafeBytes(of: all) { address.replaceSubrange(2..<4, with: $0) }
        withUnsafeBytes(of: index) { address.replaceSubrange(4..<8, with: $0) }
        let bound = address.withUnsafeBytes {
            bind(fd, $0.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t($0.count))
        }
        guard index != 0, bound == 0 else {
            close(fd)
            throw BenchFailure("cannot listen on \(bridge): \(String(cString: strerror(errno)))")
        }
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    private func read(_ fd: Int32) {
        var frame = [UInt8](repeating: 0, count: 65_535)
        while running.load(ordering: .relaxed) {
            let count = recv(fd, &frame, frame.count, 0)
            guard count > 0 else { continue }
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            if let packet = Self.mdns(frame[..<count], at: UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)) {
                packets.withLock { $0.append(packet) }
            }
        }
    }

    /// The packet, when `frame` is an IPv4 UDP frame to or from port 5353.
    private static func mdns(_ frame: ArraySlice<UInt8>, at nanoseconds: UInt64) -> Packet? {
        let bytes = Array(frame)
        guard bytes.count >= 14 + 20 + 8 + 4, bytes[12] == 0x08, bytes[13] == 0x00 else { return nil }
        let ip = 14
        let header = Int(bytes[ip] & 0x0F) * 4
        guard bytes[ip + 9] == 17, bytes.count >= ip + header + 8 + 4 else { return nil }
        let udp = ip + header
        let source = Int(bytes[udp]) << 8 | Int(bytes[udp + 1])
        let destination = Int(bytes[udp + 2]) << 8 | Int(bytes[udp + 3])
        guard source == 5353 || destination == 5353 else { return nil }
        return Packet(nanoseconds: nanoseconds, response: bytes[udp + 8 + 2] >> 7 == 1, bytes: bytes.count)
    }
}
