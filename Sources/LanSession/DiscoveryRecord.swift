import AvahiDiscovery
import WireCodec

/// What a session advertises in its DNS-SD TXT record, and how a browser reads it back.
///
/// Keys: `v` protocol version, `id` peer id (16 hex digits), `s` session name, `u` UDP port (0: none), `n` display
/// name, `a` the authentication required (`psk`: the session's secret; absent: none), and when the node has Bluetooth
/// `bt` its adapter's address and `btch` its RFCOMM channel. Nothing derived from the secret is published. Short keys keep
/// the record small (RFC 6763 section 6.2 recommends well under 200 bytes).
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
    /// It admits only peers that hold the session's secret.
    var requiresSecret = false

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
        if requiresSecret { txt["a"] = "psk" }
        if let bluetooth {
            txt["bt"] = bluetooth.host
            txt["btch"] = "\(bluetooth.port)"
        }
        return txt
    }

    /// The DNS-SD instance name, "<display name> (<peer id>)": readable in a service browser and unique on the link
    /// because of the id, so it is announced without probing. The display name is cut to fit a DNS label (63 bytes).
    var instanceName: String {
        let id = " (\(peerID))"
        var shown = displayName
        while shown.utf8.count + id.utf8.count > Self.maxLabel { shown.removeLast() }
        return shown.isEmpty ? peerID.description : shown + id
    }

    /// The longest DNS label, in bytes (RFC 1035 section 2.3.4).
    static let maxLabel = 63

    /// Reads a TXT record; nil when a required key is missing or malformed.
    init?(txt: [String: String]) {
        guard let version = txt["v"].flatMap({ UInt32($0) }), let id = txt["id"].flatMap({ PeerID(hex: $0) }),
            let session = txt["s"]
        else { return nil }
        var bluetooth: Endpoint?
        if let address = txt["bt"], address.utf8.count == 17, let channel = txt["btch"].flatMap({ Int($0) }),
            RFCOMMTransport.channels.contains(channel)
        {
            bluetooth = Endpoint(transport: RFCOMMTransport.name, host: address.uppercased(), port: channel)
        }
        self.init(
            protocolVersion: version, peerID: id, sessionName: session,
            datagramPort: txt["u"].flatMap { UInt16($0) } ?? 0, displayName: txt["n"] ?? "", bluetooth: bluetooth)
        requiresSecret = txt["a"] != nil
    }

    /// Why a discovered service is not a peer to dial, or nil when it is.
    func reasonToIgnore(localPeer: PeerID, sessionName: String, hasSecret: Bool = false) -> String? {
        if peerID == localPeer { return "our own advertisement" }
        if requiresSecret && !hasSecret { return "it requires the session's secret, and this peer has none" }
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
