import Crypto
import Foundation

/// The cipher functions a link's Noise protocol uses (`Noise_XX_25519_<cipher>_SHA256`), chosen per link from the
/// two hellos (``choice(between:and:)``).
///
/// Both seal with 32-byte keys and 16-byte tags; they differ in the cipher and in the nonce's byte order (Noise
/// revision 34, section 12.3: ChaChaPoly's counter is little-endian, AESGCM's big-endian).
public enum NoiseCipher: UInt8, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// ChaCha20-Poly1305: what every peer takes, and what an older release, whose hello lists no ciphers, speaks.
    case chaChaPoly = 1
    /// AES-256-GCM: chosen when both hellos list it.
    case aesGCM = 2

    /// The cipher's part of the Noise protocol name: "ChaChaPoly" or "AESGCM".
    public var protocolNamePart: String {
        switch self {
        case .chaChaPoly: "ChaChaPoly"
        case .aesGCM: "AESGCM"
        }
    }

    /// Its name in configuration (`LANSESSION_CIPHERS`) and status: "chachapoly" or "aesgcm".
    public var name: String { protocolNamePart.lowercased() }

    public var description: String { name }

    /// The cipher called `name` ("chachapoly" or "aesgcm", in any case), nil for any other.
    public init?(name: String) {
        guard let cipher = Self.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = cipher
    }

    /// What a device offers unless told otherwise, in its order of preference: AES-GCM first where the CPU has AES
    /// instructions (``CPUFeatures/hasAES``), then ChaCha20-Poly1305; ChaCha20-Poly1305 alone elsewhere.
    public static var defaultOffer: [NoiseCipher] { CPUFeatures.hasAES ? [.aesGCM, .chaChaPoly] : [.chaChaPoly] }

    /// A comma-separated list of names ("chachapoly,aesgcm"; spaces around names are ignored), in order of
    /// preference; nil when it is empty, names an unknown cipher, or names one twice.
    public static func list(parsing text: String) -> [NoiseCipher]? {
        var ciphers: [NoiseCipher] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let cipher = NoiseCipher(name: part.trimmingCharacters(in: .whitespaces)), !ciphers.contains(cipher)
            else { return nil }
            ciphers.append(cipher)
        }
        return ciphers.isEmpty ? nil : ciphers
    }

    /// A cipher of this kind for `key`.
    func makeCipher(key: SymmetricKey) -> any AEADCipher {
        switch self {
        case .chaChaPoly: ChaChaPolyCipher(key: key)
        case .aesGCM: AESGCMCipher(key: key)
        }
    }
}
