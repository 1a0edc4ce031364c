import CAvahi

/// The four DNS-SD records of a service added one by one, as `avahi_entry_group_add_service` adds them, but with the
/// unique ones (SRV and TXT) announced without probing: for a service whose name is known to be unique.
///
/// Records, in the order Avahi adds them (RFC 6763 sections 4, 5, 6 and 9):
/// - PTR `<type>.<domain>` → `<instance>.<type>.<domain>`, shared, TTL 4500 s;
/// - SRV `<instance>.<type>.<domain>`: priority 0, weight 0, the port, this host's name; unique, TTL 120 s;
/// - TXT `<instance>.<type>.<domain>`: the pairs; unique, TTL 4500 s;
/// - PTR `_services._dns-sd._udp.<domain>` → `<type>.<domain>`, shared, TTL 4500 s.
enum ServiceRecords {
    /// The longest domain name Avahi handles, terminator included (`AVAHI_DOMAIN_NAME_MAX`).
    static let maxDomainName = 1014
    /// The longest label, terminator included (`AVAHI_LABEL_MAX`).
    static let maxLabel = 64
    /// The largest TXT record data.
    static let maxTXT = 65_535

    /// Adds the records to `group`; returns Avahi's error code (negative) of the first that failed, or 0.
    static func add(
        to group: OpaquePointer, client: OpaquePointer, name: String, type: String, port: UInt16,
        txt: UnsafeMutablePointer<AvahiStringList>?
    ) -> Int32 {
        guard let domainName = avahi_client_get_domain_name(client),
            let hostName = avahi_client_get_host_name_fqdn(client)
        else { return avahi_client_errno(client) }
        let domain = String(cString: domainName)
        guard let instance = join(name, type, domain), let typeName = join(nil, type, domain),
            let enumeration = join(nil, "_services._dns-sd._udp", domain)
        else { return Int32(AVAHI_ERR_INVALID_SERVICE_NAME) }
        guard let target = wireName(String(cString: hostName)), let instanceData = wireName(instance),
            let typeData = wireName(typeName)
        else { return Int32(AVAHI_ERR_INVALID_DOMAIN_NAME) }
        let srv = [0, 0, 0, 0, UInt8(port >> 8), UInt8(port & 0xFF)] + target
        var text = [UInt8](repeating: 0, count: maxTXT)
        let textSize = text.withUnsafeMutableBytes { avahi_string_list_serialize(txt, $0.baseAddress, $0.count) }
        text.removeSubrange(textSize...)

        let shared = AvahiPublishFlags(0)
        let unique = AvahiPublishFlags(AVAHI_PUBLISH_UNIQUE.rawValue | AVAHI_PUBLISH_NO_PROBE.rawValue)
        let longTTL = UInt32(AVAHI_DEFAULT_TTL)
        let records: [(name: String, type: Int, flags: AvahiPublishFlags, ttl: UInt32, data: [UInt8])] = [
            (typeName, AVAHI_DNS_TYPE_PTR, shared, longTTL, instanceData),
            (instance, AVAHI_DNS_TYPE_SRV, unique, UInt32(AVAHI_DEFAULT_TTL_HOST_NAME), srv),
            (instance, AVAHI_DNS_TYPE_TXT, unique, longTTL, text),
            (enumeration, AVAHI_DNS_TYPE_PTR, shared, longTTL, typeData),
        ]
        for record in records {
            let code = record.data.withUnsafeBytes { data in
                avahi_entry_group_add_record(
                    group, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), record.flags, record.name,
                    UInt16(AVAHI_DNS_CLASS_IN), UInt16(record.type), record.ttl, data.baseAddress,
                    data.count)
            }
            guard code >= 0 else { return code }
        }
        return 0
    }

    /// `<name>.<type>.<domain>` (or `<type>.<domain>`), the instance name escaped.
    static func join(_ name: String?, _ type: String, _ domain: String) -> String? {
        var buffer = [CChar](repeating: 0, count: maxDomainName)
        let code = avahi_service_name_join(&buffer, buffer.count, name, type, domain)
        guard code >= 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A textual (escaped) domain name in DNS wire format: length-prefixed labels, then a zero; nil if a label is
    /// empty or too long, or the name is.
    static func wireName(_ name: String) -> [UInt8]? {
        name.withCString { start -> [UInt8]? in
            var wire: [UInt8] = []
            var cursor: UnsafePointer<CChar>? = start
            var label = [CChar](repeating: 0, count: maxLabel)
            while let current = cursor, current.pointee != 0 {
                guard avahi_unescape_label(&cursor, &label, label.count) != nil else { return nil }
                let bytes = label.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
                guard !bytes.isEmpty else { return nil }
                wire.append(UInt8(bytes.count))
                wire += bytes
            }
            wire.append(0)
            return wire.count <= 255 ? wire : nil
        }
    }
}
