import AvahiDiscovery
import LanSession
import Testing
import WireCodec

@testable import LanSessionDiscovery

@Suite("DiscoveryRecord")
struct DiscoveryRecordTests {
    let record = DiscoveryRecord(
        peerID: PeerID(0xABCD), sessionName: "bubbles", datagramPort: 4242, displayName: "alice")

    @Test("the TXT record round trips")
    func roundTrip() {
        #expect(
            record.txt == [
                "v": "\(Wire.protocolVersion)", "id": "000000000000abcd", "s": "bubbles", "u": "4242", "n": "alice",
            ])
        #expect(DiscoveryRecord(txt: record.txt) == record)
    }

    @Test("the instance name is the peer id in 13 base-32 digits, whatever the display name")
    func instanceName() {
        #expect(record.instanceName == "aaaaaaaaabk6n")  // 0xABCD: 1 01010 11110 01101
        #expect(DiscoveryRecord.base32(0) == "aaaaaaaaaaaaa")
        #expect(DiscoveryRecord.base32(.max) == "p777777777777")
        #expect(DiscoveryRecord.base32(1 << 63) == "iaaaaaaaaaaaa")
        var renamed = record
        renamed.displayName = String(repeating: "é", count: 40)
        #expect(renamed.instanceName == record.instanceName)
    }

    @Test("the peer id is read back from an instance name; other names name no peer")
    func peerIDFromInstanceName() {
        for value: UInt64 in [0, 1, 0xABCD, 1 << 63, .max, 0x4155_d92c_6d5b_2b1f] {
            #expect(DiscoveryRecord.peerID(fromInstanceName: DiscoveryRecord.base32(value)) == PeerID(value))
        }
        for name in [
            "", "h1", "aaaaaaaaabk6", "aaaaaaaaabk6nn", "aaaaaaaaabk6N", "aaaaaaaaabk61", "qaaaaaaaaaaaa", "h1 (x)",
        ] {
            #expect(DiscoveryRecord.peerID(fromInstanceName: name) == nil, "\(name)")
        }
    }

    @Test("records without the required keys are not LanSession peers")
    func missingKeys() {
        for key in ["v", "id", "s"] {
            var txt = record.txt
            txt[key] = nil
            #expect(DiscoveryRecord(txt: txt) == nil, "without \(key)")
        }
        var txt = record.txt
        txt["id"] = "nothex"
        #expect(DiscoveryRecord(txt: txt) == nil)
    }

    @Test("own advertisement, other sessions and other versions are ignored")
    func ignoring() {
        #expect(record.reasonToIgnore(localPeer: PeerID(1), sessionName: "bubbles") == nil)
        #expect(record.reasonToIgnore(localPeer: PeerID(0xABCD), sessionName: "bubbles") != nil)
        #expect(record.reasonToIgnore(localPeer: PeerID(1), sessionName: "counter") != nil)
        var future = record
        future.protocolVersion = Wire.protocolVersion + 1
        #expect(future.reasonToIgnore(localPeer: PeerID(1), sessionName: "bubbles") != nil)
    }

    @Test("admission and fingerprint travel as a and f; a secret, or insecure links, must match to be dialled")
    func admission() {
        var paired = record
        paired.admission = "paired"
        paired.fingerprint = "ABCD-EFGH-IJKL-MNOP"
        #expect(DiscoveryRecord(txt: paired.txt) == paired)
        #expect(paired.reasonToIgnore(localPeer: PeerID(1), sessionName: "bubbles") == nil)
        #expect(paired.reasonToIgnore(localPeer: PeerID(1), sessionName: "bubbles", hasSecret: true) != nil)
        #expect(paired.reasonToIgnore(localPeer: PeerID(1), sessionName: "bubbles", insecure: true) != nil)
        var secret = paired
        secret.admission = "psk"
        #expect(secret.reasonToIgnore(localPeer: PeerID(1), sessionName: "bubbles") != nil)
        #expect(secret.reasonToIgnore(localPeer: PeerID(1), sessionName: "bubbles", hasSecret: true) == nil)
        var insecure = record
        insecure.admission = "none"
        #expect(insecure.reasonToIgnore(localPeer: PeerID(1), sessionName: "bubbles", insecure: true) == nil)
        #expect(insecure.reasonToIgnore(localPeer: PeerID(1), sessionName: "bubbles") != nil)
    }

    @Test("a Bluetooth adapter and channel travel as bt and btch; malformed ones are ignored")
    func bluetooth() {
        var withBluetooth = record
        withBluetooth.bluetooth = Endpoint(transport: "rfcomm", host: "00:AA:01:00:00:00", port: 5)
        #expect(withBluetooth.txt["bt"] == "00:AA:01:00:00:00" && withBluetooth.txt["btch"] == "5")
        #expect(DiscoveryRecord(txt: withBluetooth.txt)?.bluetooth == withBluetooth.bluetooth)
        for (address, channel) in [("00:AA:01:00:00", "5"), ("00:AA:01:00:00:00", "31"), ("00:AA:01:00:00:00", "x")] {
            var txt = record.txt
            txt["bt"] = address
            txt["btch"] = channel
            #expect(DiscoveryRecord(txt: txt)?.bluetooth == nil, "\(address)/\(channel)")
        }
        #expect(record.txt["bt"] == nil)
    }

    @Test("every address is an endpoint, IPv4 first, and link-local IPv6 keeps its interface")
    func endpoints() {
        let v6 = ServiceAddress(address: "fe80::1", family: .ipv6, interfaceIndex: 2, interfaceName: "eth0")
        let v4 = ServiceAddress(address: "10.77.0.2", family: .ipv4, interfaceIndex: 2, interfaceName: "eth0")
        var service = DiscoveredService(
            name: "alice", type: "_lansession._tcp", domain: "local", hostName: "h.local", port: 4242,
            addresses: [v6, v4], txt: record.txt)
        let second = ServiceAddress(address: "10.78.0.2", family: .ipv4, interfaceIndex: 3, interfaceName: "eth1")
        service.addresses = [v6, v4, second, v4]
        // Every address, IPv4 first, each once.
        #expect(
            service.endpoints == [
                Endpoint(host: "10.77.0.2", port: 4242), Endpoint(host: "10.78.0.2", port: 4242),
                Endpoint(host: "fe80::1%eth0", port: 4242),
            ])
        service.addresses = [v6]
        #expect(service.endpoints == [Endpoint(host: "fe80::1%eth0", port: 4242)])
        #expect(Endpoint(host: "fe80::1%eth0", port: 4242).description == "[fe80::1%eth0]:4242")
    }
}
