extension TestHostLayout {
    /// The `ip -batch` lines, run in the switch's namespace, that make its bridges and one port per host and network,
    /// each the veth peer of a host's interface (every host's namespace must exist).
    public var switchCommands: [String] {
        var lines = ["link set lo up"]
        for network in networkNumbers {
            let bridge = Self.bridge(network: network)
            lines += [
                "link add \(bridge) type bridge stp_state 0 forward_delay 0 mcast_snooping 0", "link set \(bridge) up",
            ]
        }
        for host in hosts {
            for network in networkNumbers {
                let port = Self.port(host, network: network)
                lines += [
                    "link add \(port) type veth peer name \(Self.interface(network: network)) address "
                        + "\(Self.mac(host, network: network)) netns \(hostNamespace(host))",
                    "link set \(port) master \(Self.bridge(network: network))", "link set \(port) up",
                ]
            }
        }
        return lines
    }

    /// The `ip -batch` lines, run in host `host`'s namespace once the switch is made, that bring its interfaces up
    /// with their addresses and give it a permanent neighbour entry for every other host.
    ///
    /// The kernel's ARP table is shared by all network namespaces and holds at most gc_thresh3 (1,024 by default)
    /// entries that it may collect, so a mesh of 64 hosts (64 x 63 entries) would overflow it and drop connections;
    /// permanent entries do not count against that limit, and the machine's own settings stay as they are.
    public func hostCommands(_ host: Int) -> [String] {
        var lines = ["link set lo up"]
        for network in networkNumbers {
            let interface = Self.interface(network: network)
            lines += ["addr add \(address(host, network: network))/24 dev \(interface)", "link set \(interface) up"]
        }
        for other in hosts where other != host {
            for network in networkNumbers {
                lines.append(
                    "neigh replace \(address(other, network: network)) lladdr \(Self.mac(other, network: network)) "
                        + "dev \(Self.interface(network: network)) nud permanent")
            }
        }
        return lines
    }

    /// The configuration of host `host`'s avahi-daemon: IPv4 only, on the lab's interfaces, nothing published but
    /// what the tests publish.
    public func avahiConfiguration(_ host: Int) -> String {
        let interfaces = networkNumbers.map { Self.interface(network: $0) }.joined(separator: ",")
        return """
            # avahi-daemon of host \(host) of lab \(name) (scripts/testnet)
            [server]
            host-name=\(hostNamespace(host))
            domain-name=local
            use-ipv4=yes
            use-ipv6=no
            allow-interfaces=\(interfaces)
            enable-dbus=yes
            ratelimit-interval-usec=1000000
            ratelimit-burst=1000

            [wide-area]
            enable-wide-area=no

            [publish]
            publish-hinfo=no
            publish-workstation=no

            [reflector]
            enable-reflector=no

            """
    }
}
