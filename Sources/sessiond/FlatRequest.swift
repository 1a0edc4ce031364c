import NIOCore
import SessionControl

/// A request line read without `JSONDecoder` when it has the common shape: one JSON object whose members are each a
/// string of printable ASCII without escapes, or an integer without fraction or exponent, under a key of
/// `ControlRequestLine` of that type (`{"command": "increment", "count": 1}`). Anything else (another key, a number with a
/// fraction, an escape, `null`, a key twice, an integer of 19 digits or more) is not read here but by `JSONDecoder`,
/// which then decides alone; what is read here is what `JSONDecoder` reads from the same line. An increment's request
/// is read in a fraction of the decoder's time, on the way from the socket to the counter.
enum FlatRequest {
    /// The request in `line`, or nil when the line is not of that shape.
    static func parse(_ line: ByteBuffer) -> ControlRequestLine? {
        line.withUnsafeReadableBytes { bytes in
            var parser = Parser(bytes: bytes)
            return parser.request()
        }
    }

    private struct Parser {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        /// The keys read here, each a bit of what was seen.
        private static let keys = [
            "command", "count", "view", "size", "id", "reason", "peer", "transport", "channel", "data", "path", "name",
            "transfer", "code",
        ]

        mutating func request() -> ControlRequestLine? {
            skipSpace()
            guard take(UInt8(ascii: "{")) else { return nil }
            var request = ControlRequestLine(command: "")
            var seen = 0
            skipSpace()
            repeat {
                guard let key = string(), let bit = Self.keys.firstIndex(of: key), seen & (1 << bit) == 0 else {
                    return nil
                }
                seen |= 1 << bit
                skipSpace()
                guard take(UInt8(ascii: ":")) else { return nil }
                skipSpace()
                guard member(key, into: &request) else { return nil }
                skipSpace()
            } while take(UInt8(ascii: ",")) && skippingSpace()
            guard take(UInt8(ascii: "}")) else { return nil }
            skipSpace()
            guard index == bytes.count, seen & 1 == 1 else { return nil }  // the command is there
            return request
        }

        /// Reads the value of member `key` into `request`; false when it is not of the key's type, or not of the
        /// shape read here.
        private mutating func member(_ key: String, into request: inout ControlRequestLine) -> Bool {
            switch key {
            case "count", "view", "size":
                guard let number = integer(), let value = Int(exactly: number) else { return false }
                switch key {
                case "count": request.count = value
                case "view": request.view = value
                default: request.size = value
                }
            case "id":
                guard let number = integer(), let value = UInt64(exactly: number) else { return false }
                request.id = value
            default:
                guard let text = string() else { return false }
                switch key {
                case "command": request.command = text
                case "reason": request.reason = text
                case "peer": request.peer = text
                case "transport": request.transport = text
                case "channel": request.channel = text
                case "data": request.data = text
                case "path": request.path = text
                case "name": request.name = text
                case "transfer": request.transfer = text
                default: request.code = text
                }
            }
            return true
        }

        private mutating func skippingSpace() -> Bool {
            skipSpace()
            return true
        }

        private mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        private mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        /// A string of printable ASCII without escapes.
        private mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                    index += 1
                    return text
                }
                guard (0x20...0x7E).contains(byte), byte != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            return nil
        }

        /// An integer of at most 18 digits, without a leading zero (but 0), fraction or exponent; not -0.
        private mutating func integer() -> Int64? {
            let negative = take(UInt8(ascii: "-"))
            let start = index
            var value: Int64 = 0
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
                index += 1
                guard index - start <= 18 else { return nil }
            }
            let digits = index - start
            guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
            guard !(negative && value == 0) else { return nil }
            if index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
                default: break
                }
            }
            return negative ? -value : value
        }
    }
}
