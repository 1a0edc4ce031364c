/// Finds a member of a JSON object in its text, so a value can be passed on exactly as it was received.
enum RawJSON {
    /// The text of the value of top-level member `key` of the object in `text`; nil if it is not there (or `text`
    /// is not an object).
    static func member(_ key: String, in text: [UInt8]) -> ArraySlice<UInt8>? {
        var scanner = Scanner(bytes: text)
        scanner.skipSpace()
        guard scanner.take(UInt8(ascii: "{")) else { return nil }
        let wanted = Array(key.utf8)
        while true {
            scanner.skipSpace()
            guard let name = scanner.string() else { return nil }
            scanner.skipSpace()
            guard scanner.take(UInt8(ascii: ":")) else { return nil }
            scanner.skipSpace()
            guard let value = scanner.value() else { return nil }
            if name.elementsEqual(wanted) { return text[value] }
            scanner.skipSpace()
            guard scanner.take(UInt8(ascii: ",")) else { return nil }
        }
    }

    /// A cursor over JSON text that skips tokens without decoding them.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// Skips a string; returns its content between the quotes, escapes left as they are.
        mutating func string() -> ArraySlice<UInt8>? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\\"):
                    index += 2
                case UInt8(ascii: "\""):
                    index += 1
                    return bytes[start..<(index - 1)]
                default:
                    index += 1
                }
            }
            return nil
        }

        /// Skips one value; returns its range.
        mutating func value() -> Range<Int>? {
            let start = index
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "\""):
                guard string() != nil else { return nil }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                repeat {
                    guard index < bytes.count else { return nil }
                    switch bytes[index] {
                    case UInt8(ascii: "\""):
                        guard string() != nil else { return nil }
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["):
                        depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                    default:
                        break
                    }
                    index += 1
                } while depth > 0
            default:
                let ends: [UInt8] = [0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]")]
                while index < bytes.count, !ends.contains(bytes[index]) { index += 1 }
            }
            return index > start ? start..<index : nil
        }
    }
}
