import AvahiDiscovery
import LanSession
import WireCodec

/// What a session advertises in its DNS-SD TXT record, and how a browser reads it back.
///
/// Keys: `v` protocol version, `id` peer id (16 hex digits), `s` session name, `u` UDP port (0: none), `n` display
/// name, `a` the advertiser's admission (`paired`, `psk` for the session's secret, `open`, `none` for insecure links),
/// `f` its device key's fingerprint, and when the node has Bluetooth `bt` its adapter's address and `btch` its RFCOMM
/// channel. Nothing derived from the secret is published. Short keys keep the record small (RFC 6763 section 6.2
/// recommends well under 200 bytes). An endpoint belongs to the advertised device only after a handshake there proved
/// its key.
struct DiscoveryRecord: Hashable, Sendable {
    /// The advertiser's protocol version.
    var protocolVersion: UInt32
    /// The advertiser's identity.
    var peerID: PeerID
    /// Its session.
    var sessionName: String
    /// Its datagram port.
    var datagramPort: UInt16
    /// Its display name.
    var displayName: String
    /// Its Bluetooth adapter's address and RFCOMM channel, when it listens on RFCOMM.
    var bluetooth: Endpoint?
    /// Its admission: `paired`, `psk`, `open` or `none` (insecure links); nil from a record without one.
    var admission: String?
    /// Its device key's fingerprint (none on insecure links).
    var fingerprint: String?

    /// It admits only peers that hold the session's secret.
    var requiresSecret: Bool { admission == "psk" }

    /// The transport `bt` and `btch` name an endpoint of: Bluetooth classic (LanSessionRFCOMM's `RFCOMMTransport`).
    static let bluetoothTransport = "rfcomm"
    /// RFCOMM channels.
    static let bluetoothChannels = 1...30

    /// Creates a record.
    init(
        protocolVersion: UInt32 = Wire.protocolVersion, peerID: PeerID, sessionName: String, datagramPort: UInt16,
        displayName: String, bluetooth: Endpoint? = nil
    ) {
        self.bluetooth = bluetooth
        self.protocolVersion = protocolVersion
        self.peerID = peerID
        self.sessionName = sessionName
        self.datagramPort = datagramPort
        self.displayName = displayName
    }

    /// The TXT record.
    var txt: [String: String] {
        var txt = [
            "v": "\(protocolVersion)", "id": peerID.description, "s": sessionName, "u": "\(datagramPort)",
            "n": displayName,
        ]
        if let admission { txt["a"] = admission }
        if let fingerprint { txt["f"] = fingerprint }
        if let bluetooth {
            txt["bt"] = bluetooth.host
            txt["btch"] = "\(bluetooth.port)"
        }
        return txt
    }

    /// The DNS-SD instance name: the peer id in 13 characters of base 32 (RFC 4648's lower-case alphabet, no
    /// padding), unique on the link as the id is, so it is announced without probing. The display name travels in
    /// the TXT record (`n`), as MultipeerConnectivity keeps its own out of the instance name.
    ///
    /// Short on purpose: avahi-daemon compares names character by character in every query, answer and known answer
    /// it handles, and with "<display name> (<16 hex digits>)" a 32-host start cost the lab's avahi-daemons twice the
    /// CPU of names like "h12".
    var instanceName: String { Self.base32(peerID.rawValue) }

    /// RFC 4648's base-32 alphabet, lower case.
    static let base32Alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)

    /// The 64 bits in 13 base-32 digits, most significant first (the first digit holds 4 bits).
    static func base32(_ value: UInt64) -> String {
        var digits = [UInt8](repeating: 0, count: 13)
        var rest = value
        for index in stride(from: 12, through: 0, by: -1) {
            digits[index] = base32Alphabet[Int(rest & 31)]
            rest >>= 5
        }
        return String(decoding: digits, as: UTF8.self)
    }

    /// The peer id an instance name carries (see ``instanceName``); nil for any other name.
    static func peerID(fromInstanceName name: String) -> PeerID? {
        let digits = Array(name.utf8)
        guard digits.count == 13 else { return nil }
        var value: UInt64 = 0
        for (index, digit) in digits.enumerated() {
            guard let five = base32Alphabet.firstIndex(of: digit).map(UInt64.init) else { return nil }
            if index == 0 && five > 15 { return nil }  // the first digit holds 4 bits
            value = value << 5 | five
        }
        return PeerID(value)
    }

    /// Reads a TXT record; nil when a required key is missing or malformed.
    init?(txt: [String: String]) {
        guard let version = txt["v"].flatMap({ UInt32($0) }), let id = txt["id"].flatMap({ PeerID(hex: $0) }),
            let session = txt["s"]
        else { return nil }
        var bluetooth: Endpoint?
        if let address = txt["bt"], address.utf8.count == 17, let channel = txt["btch"].flatMap({ Int($0) }),
            Self.bluetoothChannels.contains(channel)
        {
            bluetooth = Endpoint(transport: Self.bluetoothTransport, host: address.uppercased(), port: channel)
        }
        self.init(
            protocolVersion: version, peerID: id, sessionName: session,
            datagramPort: txt["u"].flatMap { UInt16($0) } ?? 0, displayName: txt["n"] ?? "", bluetooth: bluetooth)
        admission = txt["a"]
        fingerprint = txt["f"]
    }

    /// Why a discovered service is not a peer to dial, or nil when it is.
    func reasonToIgnore(
        localPeer: PeerID, sessionName: String, hasSecret: Bool = false, insecure: Bool = false
    ) -> String? {
        if peerID == localPeer { return "our own advertisement" }
        if requiresSecret && !hasSecret { return "it requires the session's secret, and this peer has none" }
        if hasSecret && admission != nil && !requiresSecret { return "it does not admit by the session's secret" }
        if (admission == "none") != insecure {
            return insecure ? "it encrypts, and this peer runs insecure links" : "it runs insecure links"
        }
        if protocolVersion != Wire.protocolVersion {
            return "protocol version \(protocolVersion), not \(Wire.protocolVersion)"
        }
        if self.sessionName != sessionName { return "session \"\(self.sessionName)\", not \"\(sessionName)\"" }
        return nil
    }
}

extension DiscoveredService {
    /// The endpoints to dial: every address it was resolved to (one per interface and protocol), IPv4 first, IPv6
    /// link-local ones with their interface.
    var endpoints: [Endpoint] {
        var seen = Set<Endpoint>()
        return (addresses.filter { $0.family == .ipv4 } + addresses.filter { $0.family != .ipv4 })
            .map { Endpoint(host: $0.description, port: Int(port)) }
            .filter { seen.insert($0).inserted }
    }
}
