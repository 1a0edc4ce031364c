/// The layout of a lab of test hosts and its names, as a plain value: no system call reads or changes anything.
///
/// A lab NAME with N hosts has a "switch", network namespace NAME-sw with bridge br0 (ports p1..pN), and hosts NAME-h1
/// to NAME-hN, each with eth0 = 10.77.0.I/24, the veth peer of port pI. With two networks, a second bridge br1 (ports
/// q1..qN) and eth1 = 10.78.0.I/24 on each host: two networks, as Ethernet and Wi-Fi.
public struct TestHostLayout: Sendable, Equatable {
    /// The most hosts a lab may have.
    public static let maxHosts = 64
    /// The first three bytes of each network's addresses, network 1 first.
    public static let subnets = ["10.77.0", "10.78.0"]
    /// Seconds for every avahi-daemon of a lab of up to 16 hosts to come up.
    public static let readyTimeout = 10

    /// The lab's name.
    public let name: String
    /// How many hosts it has, numbered from 1.
    public let hostCount: Int
    /// How many networks (1 or 2).
    public let networks: Int

    /// A layout; throws a bad argument for a name, host count or number of networks out of range.
    public init(name: String, hostCount: Int, networks: Int = 1) throws(TestHostError) {
        try Self.checkName(name)
        guard (1...Self.maxHosts).contains(hostCount) else {
            throw TestHostError(.badArgument, "a lab has 1...\(Self.maxHosts) hosts, not \(hostCount)")
        }
        guard (1...2).contains(networks) else {
            throw TestHostError(.badArgument, "a lab has 1 or 2 networks, not \(networks)")
        }
        self.name = name
        self.hostCount = hostCount
        self.networks = networks
    }

    /// The host numbers, 1...hostCount.
    public var hosts: ClosedRange<Int> { 1...hostCount }

    /// The network numbers, 1...networks.
    public var networkNumbers: ClosedRange<Int> { 1...networks }

    /// The switch's network namespace.
    public var switchNamespace: String { "\(name)-sw" }

    /// Host `host`'s network namespace, also its avahi host name.
    public func hostNamespace(_ host: Int) -> String { "\(name)-h\(host)" }

    /// Host `host`'s IPv4 address on network `network` (1 or 2).
    public func address(_ host: Int, network: Int = 1) -> String { "\(Self.subnets[network - 1]).\(host)" }

    /// The host's interface on network `network`: eth0, eth1.
    public static func interface(network: Int) -> String { "eth\(network - 1)" }

    /// The switch's bridge of network `network`: br0, br1.
    public static func bridge(network: Int) -> String { "br\(network - 1)" }

    /// The switch's port for host `host` on network `network`: pI, qI.
    public static func port(_ host: Int, network: Int) -> String { (network == 1 ? "p" : "q") + "\(host)" }

    /// The MAC address of host `host`'s interface on network `network`: fixed, so that neighbours can be written down.
    public static func mac(_ host: Int, network: Int) -> String {
        "02:4c:53:" + [network, host / 256, host % 256].map { hex($0) }.joined(separator: ":")
    }

    /// Seconds for every avahi-daemon of the lab to come up: ``readyTimeout``, and a second more per 8 hosts past 16.
    public var readyTimeout: Int { Self.readyTimeout + (hostCount > 16 ? (hostCount - 16) / 8 : 0) }

    /// Host number `text` of this lab ("1" to the host count); a failure naming the lab's hosts otherwise.
    public func host(_ text: String) throws(TestHostError) -> Int {
        guard let first = text.utf8.first, first != UInt8(ascii: "0"), text.utf8.allSatisfy(Self.isDigit),
            let host = Int(text), hosts.contains(host)
        else { throw TestHostError.failed("lab \(name) has hosts 1..\(hostCount), not \(text)") }
        return host
    }

    /// Throws a bad argument unless `name` is a lab name: a lower-case letter, then up to 47 of a-z, 0-9 and '-'.
    public static func checkName(_ name: String) throws(TestHostError) {
        guard isName(name, maxLength: 48) else { throw TestHostError(.badArgument, "bad lab name \(name)") }
    }

    /// Whether `prefix` may start a lab's name: a lower-case letter, then up to 19 of a-z, 0-9 and '-'.
    public static func isPrefix(_ prefix: String) -> Bool { isName(prefix, maxLength: 20) }

    /// The name of the lab whose switch is network namespace `namespace`, if it is one (PREFIX-XXXXXX-sw, where
    /// XXXXXX are six hex digits).
    public static func labName(switchNamespace namespace: String) -> String? {
        guard namespace.hasSuffix("-sw") else { return nil }
        let name = String(namespace.dropLast(3))
        let suffix = name.utf8.suffix(7)
        guard name.utf8.count > 8, name.utf8.first.map(isLowercase) == true, suffix.first == UInt8(ascii: "-"),
            suffix.dropFirst().allSatisfy({ isDigit($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) }),
            name.utf8.allSatisfy({ isLowercase($0) || isDigit($0) || $0 == UInt8(ascii: "-") })
        else { return nil }
        return name
    }

    /// Whether network namespace `namespace` belongs to lab `name` (its switch or one of its hosts).
    public static func isNamespace(_ namespace: String, ofLab name: String) -> Bool {
        if namespace == "\(name)-sw" { return true }
        guard namespace.hasPrefix("\(name)-h") else { return false }
        let number = namespace.utf8.dropFirst(name.utf8.count + 2)
        return !number.isEmpty && number.allSatisfy(isDigit)
    }

    /// The name of a new lab: `prefix`, '-', then six hex digits from `random`.
    public static func labName(prefix: String, random: UInt32) -> String {
        prefix + "-" + hex(Int((random >> 8) & 0xffff), width: 4) + hex(Int(random & 0xff))
    }

    static func isName(_ name: String, maxLength: Int) -> Bool {
        let bytes = name.utf8
        guard let first = bytes.first, isLowercase(first), bytes.count <= maxLength else { return false }
        return bytes.allSatisfy { isLowercase($0) || isDigit($0) || $0 == UInt8(ascii: "-") }
    }

    static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    static func isLowercase(_ byte: UInt8) -> Bool { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) }

    static func hex(_ value: Int, width: Int = 2) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
