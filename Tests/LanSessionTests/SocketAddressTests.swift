import NIOCore
import Testing

@testable import LanSession

@Suite("SocketAddress.hasSameIP")
struct SocketAddressTests {
    @Test("the same IP on other ports matches; another IP, or another family, does not")
    func sameIP() throws {
        let a = try SocketAddress(ipAddress: "10.77.0.1", port: 47000)
        #expect(a.hasSameIP(as: try SocketAddress(ipAddress: "10.77.0.1", port: 53222)))
        #expect(!a.hasSameIP(as: try SocketAddress(ipAddress: "10.77.0.2", port: 47000)))
        #expect(!a.hasSameIP(as: try SocketAddress(ipAddress: "::ffff:10.77.0.1", port: 47000)))
        let six = try SocketAddress(ipAddress: "fe80::1", port: 1)
        #expect(six.hasSameIP(as: try SocketAddress(ipAddress: "fe80::1", port: 2)))
        #expect(!six.hasSameIP(as: try SocketAddress(ipAddress: "fe80::2", port: 1)))
    }
}
