/// Why a handshake or a sealed record or datagram was refused.
public struct LinkCryptoError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Hashable, Sendable {
        /// The secret is empty.
        case emptySecret
        /// The peer's ephemeral key is missing, malformed, or gives no usable shared secret.
        case badPublicKey
        /// The peer's proof does not match: it does not know the secret, or the handshake was replayed or altered.
        case proofMismatch
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

    public var code: Code
    public var detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code): \(detail)" }
}
