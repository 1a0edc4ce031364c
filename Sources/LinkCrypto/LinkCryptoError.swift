/// Why a handshake or a sealed record or datagram was refused.
public struct LinkCryptoError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Hashable, Sendable {
        /// The secret is empty, or a pre-shared key is not 32 bytes.
        case emptySecret
        /// A peer's public key gives no usable shared secret (a low-order point: an all-zero result).
        case badPublicKey
        /// A handshake message was refused: out of turn, of a wrong length, or failing authentication (another
        /// pre-shared key, a replay, altered bytes). The handshake is over.
        case handshakeFailed
        /// A record or datagram failed authentication (a wrong key, a replay, or altered bytes).
        case badTag
        /// A record's length field is outside the limits.
        case badRecordLength
        /// A datagram is too short to hold a counter and a tag, or too long.
        case badDatagramLength
        /// A datagram's counter was seen before or is too old for the replay window.
        case replayedDatagram
        /// This direction's nonce counter is exhausted: the link must be renewed.
        case nonceExhausted
        /// The crypto library failed; `detail` carries its text.
        case library
    }

    /// What went wrong.
    public var code: Code
    /// Details for a log.
    public var detail: String

    /// An error of `code`, with `detail` for a log.
    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code): \(detail)" }
}
