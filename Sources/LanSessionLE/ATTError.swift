/// Why the attribute server refused a PDU: an Error Response's fields (Bluetooth Core, Vol 3, Part F, 3.4.1.1), and a
/// sentence for the log.
struct ATTError: Error, Hashable, Sendable, CustomStringConvertible {
    /// An Error Response's error code.
    enum Code: UInt8, Hashable, Sendable {
        /// The handle names no attribute, or a range starts at 0 or ends before it starts.
        case invalidHandle = 0x01
        /// The attribute cannot be read.
        case readNotPermitted = 0x02
        /// The attribute cannot be written.
        case writeNotPermitted = 0x03
        /// The PDU is malformed: too short, too long, or a UUID neither 2 nor 16 bytes.
        case invalidPDU = 0x04
        /// A request this server does not handle.
        case requestNotSupported = 0x06
        /// A Read Blob's offset is past the value's end.
        case invalidOffset = 0x07
        /// No attribute in the range matches the request.
        case attributeNotFound = 0x0A
        /// A value of the wrong length for its attribute (a configuration that is not 2 bytes).
        case invalidAttributeValueLength = 0x0D
        /// A Read By Group Type of a type that is not a grouping type.
        case unsupportedGroupType = 0x10
        /// An application error: a write of the command characteristic that is not one command of the wire codec
        /// (docs/wire-format.md 4.2).
        case notACommand = 0x80
    }

    /// The error code.
    var code: Code
    /// The opcode of the request refused (0 for an empty PDU).
    var request: UInt8
    /// The handle concerned, 0 when none is.
    var handle: UInt16
    /// What was wrong, for the log.
    var reason: String

    /// Creates an error.
    init(_ code: Code, request: UInt8, handle: UInt16 = 0, _ reason: String) {
        self.code = code
        self.request = request
        self.handle = handle
        self.reason = reason
    }

    /// The Error Response PDU: opcode 0x01, the request's opcode, the handle, the code.
    var pdu: [UInt8] {
        [
            ATTServer.Opcode.errorResponse.rawValue, request, UInt8(truncatingIfNeeded: handle), UInt8(handle >> 8),
            code.rawValue,
        ]
    }

    var description: String {
        let opcode = String(request, radix: 16)
        let handle = String(handle, radix: 16)
        return "\(code) (0x\(String(code.rawValue, radix: 16))) for opcode 0x\(opcode) at handle 0x\(handle): \(reason)"
    }
}
