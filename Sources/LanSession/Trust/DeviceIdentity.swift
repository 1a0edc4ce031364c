import Crypto
import Foundation
import WireCodec

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A device's long-term keys: the X25519 key its Noise handshakes prove, and the Ed25519 key that signs its
/// statements about other devices. The peer id is derived from the X25519 public key, so that no device can claim
/// another's id without its private key.
public struct DeviceIdentity: Sendable {
    /// The key the Noise handshake proves (the static key `s`): never public, the session alone uses it.
    package let staticKey: Curve25519.KeyAgreement.PrivateKey
    /// The key that signs introductions and removals: never public, the session alone uses it.
    package let signingKey: Curve25519.Signing.PrivateKey

    /// Wraps existing keys.
    public init(staticKey: Curve25519.KeyAgreement.PrivateKey, signingKey: Curve25519.Signing.PrivateKey) {
        self.staticKey = staticKey
        self.signingKey = signingKey
    }

    /// New random keys: a new device.
    public static func generate() -> DeviceIdentity {
        DeviceIdentity(staticKey: .init(), signingKey: .init())
    }

    /// The static public key, as it travels in the handshake.
    public var publicKey: [UInt8] { Array(staticKey.publicKey.rawRepresentation) }
    /// The signing public key.
    public var signingPublicKey: [UInt8] { Array(signingKey.publicKey.rawRepresentation) }
    /// The peer id this device goes by: derived from ``publicKey``.
    public var peerID: PeerID { PeerID(publicKey: publicKey) }
    /// The short fingerprint people compare: see `PeerID.fingerprint(of:)`.
    public var fingerprint: String { PeerID.fingerprint(of: publicKey) }

    /// What the key file starts with.
    static let fileMagic = Array("LanSession device key 1\n".utf8)
    /// The key file's length: the magic, then the two 32-byte private keys.
    static var fileLength: Int { fileMagic.count + 64 }

    /// The identity kept in `directory/device-key`, made the first time (the directory mode 0700, the file 0600,
    /// written atomically).
    ///
    /// A key file that cannot be read, that others may read or write, or that does not hold a key stops here with
    /// an error naming the file and what is wrong: it is never replaced (a new key would be a new device).
    public static func persistent(in directory: String) throws(SessionError) -> DeviceIdentity {
        let path = directory + "/device-key"
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw ResourceFile.error("cannot create \(directory)")
        }
        var info = stat()
        if lstat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw SessionError(.invalidConfiguration, "\(path) is not a regular file")
            }
            let mode = info.st_mode & 0o777
            guard mode & 0o077 == 0 else {
                throw SessionError(
                    .invalidConfiguration,
                    "\(path) has mode \(String(mode, radix: 8)): others may read the device key; chmod 600 \(path)")
            }
            guard let bytes = FileManager.default.contents(atPath: path) else {
                throw ResourceFile.error("cannot read \(path)")
            }
            return try decode(Array(bytes), path: path)
        }
        guard errno == ENOENT else { throw ResourceFile.error("cannot read \(path)") }
        let identity = generate()
        try AtomicFile.write(identity.encoded(), to: path)
        return identity
    }

    func encoded() -> [UInt8] {
        Self.fileMagic + Array(staticKey.rawRepresentation) + Array(signingKey.rawRepresentation)
    }

    static func decode(_ bytes: [UInt8], path: String) throws(SessionError) -> DeviceIdentity {
        guard bytes.count == fileLength, Array(bytes[0..<fileMagic.count]) == fileMagic else {
            throw SessionError(
                .invalidConfiguration,
                "\(path) does not hold a device key (\(bytes.count) bytes); move it away to make a new device")
        }
        let start = fileMagic.count
        do {
            return DeviceIdentity(
                staticKey: try .init(rawRepresentation: bytes[start..<(start + 32)]),
                signingKey: try .init(rawRepresentation: bytes[(start + 32)..<(start + 64)]))
        } catch {
            throw SessionError(.invalidConfiguration, "\(path) holds a malformed key: \(error)")
        }
    }
}

extension PeerID {
    /// The peer id of a device whose static public key is `publicKey`: the first 8 bytes of its SHA-256, read as
    /// `u64le` (0, which is not a peer id, becomes 1).
    public init(publicKey: [UInt8]) {
        let digest = Array(SHA256.hash(data: publicKey))
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(digest[index]) << (8 * index) }
        self.init(rawValue: value == 0 ? 1 : value)
    }

    /// The fingerprint people compare for a static public key: the first 10 bytes of its SHA-256 in base32
    /// (RFC 4648), as four groups of four, e.g. `K7QF-2MXA-9…` (16 characters, 80 bits).
    public static func fingerprint(of publicKey: [UInt8]) -> String {
        let digest = Array(SHA256.hash(data: publicKey))[0..<10]
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var bits = 0
        var value = 0
        var characters: [Character] = []
        for byte in digest {
            value = (value << 8) | Int(byte)
            bits += 8
            while bits >= 5 {
                characters.append(alphabet[(value >> (bits - 5)) & 31])
                bits -= 5
            }
        }
        return stride(from: 0, to: characters.count, by: 4).map { String(characters[$0..<($0 + 4)]) }
            .joined(separator: "-")
    }
}
