import CAvahi

/// Conversions between `[String: String]` and Avahi's TXT string lists; the only code that touches them.
enum TXTRecord {
    /// A new Avahi string list holding `txt`, keys sorted; the caller frees it with `avahi_string_list_free`.
    static func makeStringList(_ txt: [String: String]) -> UnsafeMutablePointer<AvahiStringList>? {
        var list: UnsafeMutablePointer<AvahiStringList>?
        for key in txt.keys.sorted() {
            list = avahi_string_list_add_pair(list, key, txt[key]!)
        }
        return list
    }

    /// The pairs of an Avahi string list; an entry without `=` maps to the empty string.
    static func dictionary(_ list: UnsafeMutablePointer<AvahiStringList>?) -> [String: String] {
        var result: [String: String] = [:]
        var node = list
        while let current = node {
            var key: UnsafeMutablePointer<CChar>?
            var value: UnsafeMutablePointer<CChar>?
            var size = 0
            if avahi_string_list_get_pair(current, &key, &value, &size) == 0, let key {
                let valueText =
                    value.map { pointer in
                        String(decoding: UnsafeRawBufferPointer(start: pointer, count: size), as: UTF8.self)
                    } ?? ""
                result[String(cString: key)] = valueText
                avahi_free(key)
                avahi_free(value)
            }
            node = avahi_string_list_get_next(current)
        }
        return result
    }
}
