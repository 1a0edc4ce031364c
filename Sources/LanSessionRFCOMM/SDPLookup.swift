import CBluetooth
import LanSession

#if canImport(Glibc)
    import Glibc
#endif

/// Looks up, in a device's SDP database, the RFCOMM channel of LanSession's service (docs/wire-format.md 4.4): what a
/// daemon dials when it is given a peer's address without a channel.
///
/// Blocking (an L2CAP connection to the device's SDP server, then one request): called off the event loop. A device
/// without an SDP server (no bluetoothd there) or without the record gives nil, and the caller dials its default.
public enum SDPLookup {
    /// LanSession's service class UUID, the GATT service's (`4C414E53-4553-5349-4F4E-0000000000A0`).
    static let serviceUUID: [UInt8] = [
        0x4C, 0x41, 0x4E, 0x53, 0x45, 0x53, 0x53, 0x49, 0x4F, 0x4E, 0x00, 0x00, 0x00, 0x00, 0x00, 0xA0,
    ]

    /// The RFCOMM channel of LanSession's record on the device at `address` ("AA:BB:CC:DD:EE:FF"), reached from
    /// the adapter at `adapterAddress` (nil: any); nil when it has no SDP server or no such record.
    public static func channel(of address: String, from adapterAddress: String? = nil) throws(SessionError) -> Int? {
        var remote = try BluetoothSockets.address(address)
        var local =
            try adapterAddress.map { text throws(SessionError) in try BluetoothSockets.address(text) } ?? bdaddr_t()
        guard let session = sdp_connect(&local, &remote, UInt32(SDP_RETRY_IF_BUSY)) else { return nil }
        defer { sdp_close(session) }
        var uuid = uuid_t()
        var bytes = serviceUUID
        _ = bytes.withUnsafeMutableBytes { sdp_uuid128_create(&uuid, $0.baseAddress) }
        var range: UInt32 = 0x0000_FFFF
        return withUnsafeMutablePointer(to: &uuid) { uuidPointer in
            withUnsafeMutablePointer(to: &range) { rangePointer in
                let search = sdp_list_append(nil, uuidPointer)
                let attributes = sdp_list_append(nil, rangePointer)
                defer {
                    sdp_list_free(search, nil)
                    sdp_list_free(attributes, nil)
                }
                var response: UnsafeMutablePointer<sdp_list_t>?
                guard sdp_service_search_attr_req(session, search, SDP_ATTR_REQ_RANGE, attributes, &response) == 0
                else { return nil }
                defer { sdp_list_free(response, nil) }
                var found: Int?
                var node = response
                while let current = node {
                    let record = current.pointee.data.assumingMemoryBound(to: sdp_record_t.self)
                    var protocols: UnsafeMutablePointer<sdp_list_t>?
                    if found == nil, sdp_get_access_protos(record, &protocols) == 0 {
                        let port = sdp_get_proto_port(protocols, Int32(RFCOMM_UUID))
                        if port > 0 { found = Int(port) }
                        var sequence = protocols
                        while let element = sequence {
                            sdp_list_free(element.pointee.data.assumingMemoryBound(to: sdp_list_t.self), nil)
                            sequence = element.pointee.next
                        }
                        sdp_list_free(protocols, nil)
                    }
                    sdp_record_free(record)
                    node = current.pointee.next
                }
                return found
            }
        }
    }
}
