import CSystemdBus

/// Writes ``BusValue``s into, and reads them out of, one sd-bus message; used only on the connection's thread.
struct BusMessage {
    let pointer: OpaquePointer

    // MARK: - Writing

    func append(_ values: [BusValue]) throws(BusError) {
        for value in values { try append(value) }
    }

    func append(_ value: BusValue) throws(BusError) {
        let m = pointer
        switch value {
        case .byte(var byte): try check(sd_bus_message_append_basic(m, type("y"), &byte), "append a byte")
        case .boolean(let truth):
            var number: Int32 = truth ? 1 : 0
            try check(sd_bus_message_append_basic(m, type("b"), &number), "append a boolean")
        case .int16(var number): try check(sd_bus_message_append_basic(m, type("n"), &number), "append an int16")
        case .uint16(var number): try check(sd_bus_message_append_basic(m, type("q"), &number), "append a uint16")
        case .int32(var number): try check(sd_bus_message_append_basic(m, type("i"), &number), "append an int32")
        case .uint32(var number): try check(sd_bus_message_append_basic(m, type("u"), &number), "append a uint32")
        case .int64(var number): try check(sd_bus_message_append_basic(m, type("x"), &number), "append an int64")
        case .uint64(var number): try check(sd_bus_message_append_basic(m, type("t"), &number), "append a uint64")
        case .double(var number): try check(sd_bus_message_append_basic(m, type("d"), &number), "append a double")
        case .string(let text), .objectPath(let text), .signature(let text):
            let code = value.signature.utf8.first!
            let result = text.withCString { sd_bus_message_append_basic(m, CChar(code), $0) }
            try check(result, "append \(value.signature) \"\(text)\"")
        case .bytes(let bytes):
            let result = bytes.withUnsafeBytes { sd_bus_message_append_array(m, type("y"), $0.baseAddress, $0.count) }
            try check(result, "append \(bytes.count) bytes")
        case .array(let element, let elements):
            try container("a", element) { () throws(BusError) in
                for element in elements { try append(element) }
            }
        case .dictionary(let key, let valueType, let entries):
            try container("a", "{\(key)\(valueType)}") { () throws(BusError) in
                for entry in entries {
                    try container("e", key + valueType) { () throws(BusError) in
                        try append(entry.key)
                        try append(entry.value)
                    }
                }
            }
        case .structure(let fields):
            try container("r", fields.map(\.signature).joined()) { () throws(BusError) in try append(fields) }
        case .variant(let inner):
            try container("v", inner.signature) { () throws(BusError) in try append(inner) }
        }
    }

    private func container(
        _ kind: Unicode.Scalar, _ contents: String, _ body: () throws(BusError) -> Void
    ) throws(BusError) {
        let opened = contents.withCString { sd_bus_message_open_container(pointer, type(kind), $0) }
        try check(opened, "open a container \(kind)\(contents)")
        try body()
        try check(sd_bus_message_close_container(pointer), "close a container \(kind)\(contents)")
    }

    // MARK: - Reading

    /// Every value left at this level (the message's arguments, or a container's members).
    func readAll() throws(BusError) -> [BusValue] {
        var values: [BusValue] = []
        while let value = try readNext() { values.append(value) }
        return values
    }

    /// The next value, or nil at the end of the message or container.
    func readNext() throws(BusError) -> BusValue? {
        let m = pointer
        var code: CChar = 0
        var contents: UnsafePointer<CChar>?
        let peeked = sd_bus_message_peek_type(m, &code, &contents)
        try check(peeked, "read a type")
        guard peeked > 0 else { return nil }
        switch Unicode.Scalar(UInt8(bitPattern: code)) {
        case "y": return .byte(try basic(code, UInt8(0)))
        case "b": return .boolean(try basic(code, Int32(0)) != 0)
        case "n": return .int16(try basic(code, Int16(0)))
        case "q": return .uint16(try basic(code, UInt16(0)))
        case "i": return .int32(try basic(code, Int32(0)))
        case "u": return .uint32(try basic(code, UInt32(0)))
        case "x": return .int64(try basic(code, Int64(0)))
        case "t": return .uint64(try basic(code, UInt64(0)))
        case "d": return .double(try basic(code, Double(0)))
        case "s", "o", "g":
            let text = String(cString: try basic(code, UnsafePointer<CChar>?.none)!)
            switch Unicode.Scalar(UInt8(bitPattern: code)) {
            case "s": return .string(text)
            case "o": return .objectPath(text)
            default: return .signature(text)
            }
        case "a":
            let element = String(cString: contents!)
            if element == "y" {
                var bytes: UnsafeRawPointer?
                var count = 0
                try check(sd_bus_message_read_array(m, type("y"), &bytes, &count), "read bytes")
                return .bytes(count == 0 ? [] : Array(UnsafeRawBufferPointer(start: bytes, count: count)))
            }
            try enter("a", element)
            defer { sd_bus_message_exit_container(m) }
            guard element.hasPrefix("{") else { return .array(element: element, try readAll()) }
            let entry = String(element.dropFirst().dropLast())
            var entries: [BusValue.DictionaryEntry] = []
            while try enter("e", entry) {
                guard let key = try readNext(), let value = try readNext() else {
                    throw BusError(.badMessage, message: "a dictionary entry without a key or value")
                }
                entries.append(BusValue.DictionaryEntry(key, value))
                try check(sd_bus_message_exit_container(m), "leave a dictionary entry")
            }
            return .dictionary(key: String(entry.prefix(1)), value: String(entry.dropFirst()), entries)
        case "r":
            let fields = String(cString: contents!)
            try enter("r", fields)
            defer { sd_bus_message_exit_container(m) }
            return .structure(try readAll())
        case "v":
            let inner = String(cString: contents!)
            try enter("v", inner)
            defer { sd_bus_message_exit_container(m) }
            guard let value = try readNext() else { throw BusError(.badMessage, message: "an empty variant") }
            return .variant(value)
        default:
            throw BusError(.badMessage, message: "a value of type \(UInt8(bitPattern: code)) that is not supported")
        }
    }

    /// Enters a container; false at the end of the enclosing one.
    @discardableResult
    private func enter(_ kind: Unicode.Scalar, _ contents: String) throws(BusError) -> Bool {
        let entered = contents.withCString { sd_bus_message_enter_container(pointer, type(kind), $0) }
        try check(entered, "enter a container \(kind)\(contents)")
        return entered > 0
    }

    private func basic<T: BitwiseCopyable>(_ code: CChar, _ initial: T) throws(BusError) -> T {
        var value = initial
        let result = withUnsafeMutableBytes(of: &value) { sd_bus_message_read_basic(pointer, code, $0.baseAddress) }
        try check(result, "read a basic value")
        return value
    }
}

/// The type code sd-bus takes for `scalar`.
func type(_ scalar: Unicode.Scalar) -> CChar { CChar(UInt8(ascii: scalar)) }

/// Throws the error for a negative sd-bus result.
func check(_ result: Int32, _ operation: @autoclosure () -> String) throws(BusError) {
    guard result >= 0 else { throw BusError(result: result, operation()) }
}
