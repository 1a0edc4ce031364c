/// One value of the D-Bus type system, with what its signature needs: an empty array or dictionary keeps the type of
/// its elements.
public indirect enum BusValue: Hashable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// An array of bytes (`ay`), kept as bytes.
    case bytes([UInt8])
    /// An array whose elements have the signature `element`.
    case array(element: String, [BusValue])
    /// A dictionary (`a{kv}`): entries whose keys have the signature `key` (a basic type) and values `value`.
    case dictionary(key: String, value: String, [DictionaryEntry])
    /// A structure (`(…)`).
    case structure([BusValue])
    /// A variant (`v`): any value with its own signature.
    case variant(BusValue)

    /// One entry of a ``dictionary(key:value:_:)``.
    public struct DictionaryEntry: Hashable, Sendable {
        public var key: BusValue
        public var value: BusValue

        public init(_ key: BusValue, _ value: BusValue) {
            self.key = key
            self.value = value
        }
    }

    /// The value's signature: `s`, `ay`, `a{sv}`, `(ii)`…
    public var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .bytes: "ay"
        case .array(let element, _): "a" + element
        case .dictionary(let key, let value, _): "a{" + key + value + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }

    /// An `a{sv}` dictionary, as BlueZ's properties and options are.
    public static func properties(_ entries: [(String, BusValue)]) -> BusValue {
        .dictionary(key: "s", value: "v", entries.map { DictionaryEntry(.string($0.0), .variant($0.1)) })
    }

    /// An array of strings (`as`).
    public static func strings(_ strings: [String]) -> BusValue {
        .array(element: "s", strings.map(BusValue.string))
    }

    // MARK: - Reading

    /// The string of a `s`, `o` or `g`; nil for any other value.
    public var stringValue: String? {
        switch self {
        case .string(let text), .objectPath(let text), .signature(let text): text
        case .variant(let inner): inner.stringValue
        default: nil
        }
    }

    /// The bytes of an `ay`; nil for any other value.
    public var bytesValue: [UInt8]? {
        switch self {
        case .bytes(let bytes): bytes
        case .variant(let inner): inner.bytesValue
        default: nil
        }
    }

    /// A dictionary with string keys (as `a{sv}`), its variants opened; nil for any other value.
    public var propertiesValue: [String: BusValue]? {
        guard case .dictionary(_, _, let entries) = self else { return nil }
        var result: [String: BusValue] = [:]
        for entry in entries {
            guard let key = entry.key.stringValue else { return nil }
            if case .variant(let inner) = entry.value {
                result[key] = inner
            } else {
                result[key] = entry.value
            }
        }
        return result
    }

    /// A whole number of any width (an unsigned 16-bit offset, say); nil for other values.
    public var integerValue: Int? {
        switch self {
        case .byte(let value): Int(value)
        case .int16(let value): Int(value)
        case .uint16(let value): Int(value)
        case .int32(let value): Int(value)
        case .uint32(let value): Int(value)
        case .int64(let value): Int(value)
        case .uint64(let value): Int(exactly: value)
        case .variant(let inner): inner.integerValue
        default: nil
        }
    }

    /// The truth of a `b`; nil for other values.
    public var booleanValue: Bool? {
        switch self {
        case .boolean(let value): value
        case .variant(let inner): inner.booleanValue
        default: nil
        }
    }
}
