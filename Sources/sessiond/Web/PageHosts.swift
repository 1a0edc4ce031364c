import Foundation
import NIOCore
import NIOPosix

/// The names the page answers to, checked against each request's `Host` (RFC 9110 7.2): this machine's loopback names
/// and host name, and the address it listens on (every interface's address when it listens on all). Another name is a
/// page of another site that resolved to this one (DNS rebinding): refused even with the token.
struct PageHosts: Sendable {
    /// The port the page listens on.
    let port: Int
    /// The address it was bound to ("0.0.0.0" or "::" for every interface).
    let boundHost: String
    /// This machine's host name, lowercased.
    let hostName: String

    init(port: Int, boundHost: String, hostName: String = ProcessInfo.processInfo.hostName) {
        self.port = port
        self.boundHost = boundHost
        self.hostName = hostName.lowercased()
    }

    /// Whether a request with this `Host` header may be answered.
    func allows(_ header: String?) -> Bool {
        guard let header, let (name, port) = Self.split(header.lowercased()) else { return false }
        guard port == self.port || (port == nil && self.port == 80) else { return false }
        if ["localhost", "127.0.0.1", "::1", hostName, hostName + ".local"].contains(name) { return true }
        if boundHost == "0.0.0.0" || boundHost == "::" {
            return Self.interfaceAddresses().contains(name)
        }
        return name == boundHost.lowercased()
    }

    /// The name and port of a `Host` value: `name`, `name:port`, `[v6]` or `[v6]:port`; nil when malformed.
    static func split(_ value: String) -> (name: String, port: Int?)? {
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]") else { return nil }
            let name = String(value[value.index(after: value.startIndex)..<close])
            let rest = value[value.index(after: close)...]
            if rest.isEmpty { return (name, nil) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()) else { return nil }
            return (name, port)
        }
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 1: return parts[0].isEmpty ? nil : (String(parts[0]), nil)
        case 2:
            guard !parts[0].isEmpty, let port = Int(parts[1]) else { return nil }
            return (String(parts[0]), port)
        default: return nil
        }
    }

    /// Every address of this machine's interfaces, as text (read at each request: addresses come and go).
    static func interfaceAddresses() -> Set<String> {
        let devices = (try? System.enumerateDevices()) ?? []
        return Set(devices.compactMap { $0.address?.ipAddress?.lowercased() })
    }
}
