import TestHosts
import Testing

/// A lab's names, addresses, interfaces and commands as scripts/testnet's header documents them.
@Suite("TestHostLayout")
struct TestHostLayoutTests {
    @Test("names, addresses, interfaces and MACs of a lab")
    func names() throws {
        let layout = try TestHostLayout(name: "lst-0a1b2c", hostCount: 3, networks: 2)
        #expect(layout.switchNamespace == "lst-0a1b2c-sw")
        #expect(layout.hostNamespace(2) == "lst-0a1b2c-h2")
        #expect(layout.address(3) == "10.77.0.3")
        #expect(layout.address(3, network: 2) == "10.78.0.3")
        #expect(TestHostLayout.interface(network: 2) == "eth1")
        #expect(TestHostLayout.bridge(network: 1) == "br0")
        #expect(TestHostLayout.port(4, network: 1) == "p4")
        #expect(TestHostLayout.port(4, network: 2) == "q4")
        #expect(TestHostLayout.mac(1, network: 1) == "02:4c:53:01:00:01")
        #expect(TestHostLayout.mac(300, network: 2) == "02:4c:53:02:01:2c")
        #expect(layout.readyTimeout == 10)
        #expect(try TestHostLayout(name: "a", hostCount: 64).readyTimeout == 16)
    }

    @Test("lab names, prefixes and host counts are checked")
    func checks() throws {
        #expect(throws: TestHostError(.badArgument, "bad lab name Lab")) { try TestHostLayout.checkName("Lab") }
        #expect(throws: TestHostError.self) { try TestHostLayout.checkName(String(repeating: "a", count: 49)) }
        #expect(throws: TestHostError.self) { try TestHostLayout.checkName("1ab") }
        try TestHostLayout.checkName(String(repeating: "a", count: 48))
        #expect(TestHostLayout.isPrefix("bench-mesh"))
        #expect(!TestHostLayout.isPrefix(String(repeating: "a", count: 21)))
        #expect(!TestHostLayout.isPrefix("a_b"))
        #expect(throws: TestHostError.self) { try TestHostLayout(name: "a", hostCount: 65) }
        #expect(throws: TestHostError.self) { try TestHostLayout(name: "a", hostCount: 0) }
        #expect(throws: TestHostError.self) { try TestHostLayout(name: "a", hostCount: 1, networks: 3) }
    }

    @Test("a host is a number from 1 to the host count, without leading zero")
    func hosts() throws {
        let layout = try TestHostLayout(name: "lab", hostCount: 12)
        #expect(try layout.host("12") == 12)
        let error = TestHostError.failed("lab lab has hosts 1..12, not 13")
        #expect(throws: error) { try layout.host("13") }
        for text in ["0", "01", "", "x", "-1", "+1"] {
            #expect(throws: TestHostError.self) { try layout.host(text) }
        }
    }

    @Test("generated lab names, and the labs their namespaces belong to")
    func labNames() {
        let name = TestHostLayout.labName(prefix: "lst", random: 0x00ab_cdef)
        #expect(name == "lst-abcdef")
        #expect(TestHostLayout.labName(prefix: "x", random: 0x0000_0001) == "x-000001")
        #expect(TestHostLayout.labName(switchNamespace: "lst-abcdef-sw") == "lst-abcdef")
        #expect(TestHostLayout.labName(switchNamespace: "bench-mesh-0012ff-sw") == "bench-mesh-0012ff")
        #expect(TestHostLayout.labName(switchNamespace: "lst-abcdeg-sw") == nil)
        #expect(TestHostLayout.labName(switchNamespace: "lst-abcdef-h1") == nil)
        #expect(TestHostLayout.labName(switchNamespace: "abcdef-sw") == nil)
        #expect(TestHostLayout.isNamespace("lst-abcdef-h12", ofLab: "lst-abcdef"))
        #expect(TestHostLayout.isNamespace("lst-abcdef-sw", ofLab: "lst-abcdef"))
        #expect(!TestHostLayout.isNamespace("lst-abcdef-h", ofLab: "lst-abcdef"))
        #expect(!TestHostLayout.isNamespace("lst-abcdef-h1x", ofLab: "lst-abcdef"))
        #expect(!TestHostLayout.isNamespace("lst-abcdef0-h1", ofLab: "lst-abcdef"))
    }

    @Test("the switch's and the hosts' ip commands")
    func commands() throws {
        let layout = try TestHostLayout(name: "lab", hostCount: 2, networks: 2)
        #expect(
            layout.switchCommands == [
                "link set lo up",
                "link add br0 type bridge stp_state 0 forward_delay 0 mcast_snooping 0", "link set br0 up",
                "link add br1 type bridge stp_state 0 forward_delay 0 mcast_snooping 0", "link set br1 up",
                "link add p1 type veth peer name eth0 address 02:4c:53:01:00:01 netns lab-h1", "link set p1 master br0",
                "link set p1 up",
                "link add q1 type veth peer name eth1 address 02:4c:53:02:00:01 netns lab-h1", "link set q1 master br1",
                "link set q1 up",
                "link add p2 type veth peer name eth0 address 02:4c:53:01:00:02 netns lab-h2", "link set p2 master br0",
                "link set p2 up",
                "link add q2 type veth peer name eth1 address 02:4c:53:02:00:02 netns lab-h2", "link set q2 master br1",
                "link set q2 up",
            ])
        #expect(
            layout.hostCommands(1) == [
                "link set lo up", "addr add 10.77.0.1/24 dev eth0", "link set eth0 up",
                "addr add 10.78.0.1/24 dev eth1",
                "link set eth1 up", "neigh replace 10.77.0.2 lladdr 02:4c:53:01:00:02 dev eth0 nud permanent",
                "neigh replace 10.78.0.2 lladdr 02:4c:53:02:00:02 dev eth1 nud permanent",
            ])
        let mesh = try TestHostLayout(name: "lab", hostCount: 64)
        #expect(mesh.hostCommands(5).filter { $0.hasPrefix("neigh") }.count == 63)
    }

    @Test("avahi-daemon's configuration: IPv4 only, on the lab's interfaces")
    func avahiConfiguration() throws {
        let one = try TestHostLayout(name: "lab", hostCount: 2).avahiConfiguration(2)
        #expect(one.contains("host-name=lab-h2\n"))
        #expect(one.contains("use-ipv6=no\n"))
        #expect(one.contains("allow-interfaces=eth0\n"))
        let two = try TestHostLayout(name: "lab", hostCount: 2, networks: 2).avahiConfiguration(1)
        #expect(two.contains("allow-interfaces=eth0,eth1\n"))
        #expect(two.hasPrefix("# avahi-daemon of host 1 of lab lab (scripts/testnet)\n[server]\n"))
    }
}
