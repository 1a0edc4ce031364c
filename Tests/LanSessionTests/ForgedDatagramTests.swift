import Foundation
import LanSession
import NIOCore
import TestSupport
import Testing
import WireCodec

#if canImport(Glibc)
    import Glibc
#endif

/// Datagrams that do not carry a link's token are dropped.
@Suite("Session against forged datagrams", .serialized)
struct ForgedDatagramTests {
    @Test("a datagram with an unknown token is dropped; the peer's own still arrive")
    func forgedDatagram() async throws {
        let a = try makeSession(1)
        let b = try makeSession(2)
        let eventsB = EventRecorder(b)
        try await mesh([a, b])
        #expect(try await waitUntil { try await b.peers().first?.unreliable == .udp })
        #expect(try await waitUntil { try await a.peers().first?.unreliable == .udp })
        let forged = try Datagram(
            header: DatagramHeader(linkToken: 0xDEAD_BEEF, sequence: 1), messages: [.data([9, 9, 9])]
        ).encode()
        let sender = try DatagramSink()
        let port = await b.port
        for _ in 0..<20 { sender.send(forged, toPort: port) }
        try await a.send([1, 2, 3], mode: .unreliable)
        #expect(
            await eventsB.wait {
                $0.contains(.data(from: PeerID(1), bytes: ByteBuffer(bytes: [1, 2, 3]), reliable: false))
            })
        #expect(
            !eventsB.events.contains {
                if case .data(_, let bytes, _) = $0 { Array(bytes.readableBytesView) == [9, 9, 9] } else { false }
            })
        await stopAll([a, b])
    }
}
