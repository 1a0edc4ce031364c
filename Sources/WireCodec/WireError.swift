/// Why bytes could not be decoded, or a message could not be encoded.
///
/// Decoding never traps: every malformed input ends in one of these codes.
public struct WireError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong. The numbers are stable and may be logged or sent.
    public enum Code: UInt8, Hashable, Sendable, CaseIterable {
        /// The input ended inside a header, a field or a frame.
        case truncated = 1
        /// A frame announced a body longer than the configured limit.
        case frameTooLong = 2
        /// A varint was longer than its type allows, or not in its shortest form.
        case overlongVarint = 3
        /// The kind byte names no known message.
        case unknownKind = 4
        /// A message body had bytes left after its last field.
        case trailingBytes = 5
        /// A string field was not valid UTF-8.
        case invalidUTF8 = 6
        /// A coordinate was NaN or infinite.
        case nonFiniteCoordinate = 7
        /// A string or bytes field was longer than its field's limit.
        case fieldTooLong = 8
        /// A list had more entries than its limit.
        case tooManyEntries = 9
        /// An integer field was outside its field's range.
        case valueOutOfRange = 10
        /// A datagram would exceed, or exceeded, `Wire.maxDatagramLength`.
        case datagramTooLarge = 11
        /// A datagram carried no message.
        case emptyDatagram = 12
    }

    /// What went wrong.
    public var code: Code
    /// Offset in the decoded input (frame body or datagram) at which the problem was found; 0 when encoding.
    public var offset: Int
    /// The field or limit concerned, for logs.
    public var detail: String

    /// Creates an error.
    public init(_ code: Code, offset: Int = 0, detail: String = "") {
        self.code = code
        self.offset = offset
        self.detail = detail
    }

    public var description: String {
        var text = "\(code) (wire error \(code.rawValue)) at byte \(offset)"
        if !detail.isEmpty { text += ": \(detail)" }
        return text
    }
}
