import COpenSSL
import Crypto
import WireCodec

/// One key of an AEAD of OpenSSL's libcrypto (ChaCha20-Poly1305 or AES-256-GCM), through its EVP interface: what
/// ``ChaChaPolyCipher`` and ``AESGCMCipher`` share, and the only place in LinkCrypto that touches libcrypto's pointers.
///
/// Each direction has one cipher context, set up with the key on its first use and given only the nonce per
/// message, and a message is sealed or opened between buffers the caller owns (the same buffer for both is allowed):
/// no allocation per record.
///
/// A context is used by one owner at a time: a link's sealer or opener on the link's event loop. Copies of a
/// ``CipherState`` share it, and only one of them is used after the copy.
final class EVPAEAD: @unchecked Sendable {
    /// The key's length, for both ciphers.
    static let keyLength = 32

    private let key: SymmetricKey
    /// libcrypto's cipher (`EVP_chacha20_poly1305()`, `EVP_aes_256_gcm()`).
    private let algorithm: OpaquePointer
    /// Its name, for errors.
    let name: String
    /// Each direction's context, set up on its first use: a record's or datagram's cipher only ever seals or only
    /// ever opens, the handshake's does both.
    private var sealingContext: OpaquePointer?
    private var openingContext: OpaquePointer?

    /// A cipher of `algorithm` (called `name` in errors) for `key`.
    init(key: SymmetricKey, algorithm: OpaquePointer?, name: String) {
        precondition(key.bitCount == Self.keyLength * 8, "\(name) takes a 256-bit key")
        precondition(Self.initialized, "libcrypto did not initialise: \(Self.libraryText())")
        guard let algorithm else { fatalError("libcrypto has no \(name): \(Self.libraryText())") }
        self.key = key
        self.algorithm = algorithm
        self.name = name
    }

    deinit {
        if let sealingContext { EVP_CIPHER_CTX_free(sealingContext) }
        if let openingContext { EVP_CIPHER_CTX_free(openingContext) }
    }

    private var sealing: OpaquePointer {
        if let sealingContext { return sealingContext }
        let context = makeContext(sealing: true)
        sealingContext = context
        return context
    }

    private var opening: OpaquePointer {
        if let openingContext { return openingContext }
        let context = makeContext(sealing: false)
        openingContext = context
        return context
    }

    /// A context set up with the key for one direction. It fails only when OpenSSL cannot allocate one, which stops
    /// the process, as any allocation failure in Swift does.
    private func makeContext(sealing: Bool) -> OpaquePointer {
        guard let context = EVP_CIPHER_CTX_new() else {
            fatalError("libcrypto cannot allocate a cipher context: \(Self.libraryText())")
        }
        let ready = key.withUnsafeBytes { raw in
            let bytes = raw.assumingMemoryBound(to: UInt8.self).baseAddress
            return sealing
                ? EVP_EncryptInit_ex(context, algorithm, nil, bytes, nil) == 1
                : EVP_DecryptInit_ex(context, algorithm, nil, bytes, nil) == 1
        }
        guard ready else { fatalError("libcrypto cannot set up \(name): \(Self.libraryText())") }
        return context
    }

    /// Bytes sealing `count` bytes of plaintext makes: the ciphertext and the tag.
    static func sealedSize(of count: Int) -> Int { count + Wire.sealTagLength }

    /// Seals the plaintext `plaintext` then `rest` (one message given in two parts, read where they lie) with
    /// `additional` data under the 12 bytes at `nonce`: the ciphertext, then the tag, written to the first
    /// ``sealedSize(of:)`` bytes of `output`.
    func seal(
        _ plaintext: UnsafeRawBufferPointer,
        _ rest: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
        additional: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(LinkCryptoError) {
        let total = plaintext.count + rest.count
        precondition(output.count >= Self.sealedSize(of: total), "no room for the sealed message")
        precondition(nonce.count == 12, "a nonce is 12 bytes")
        let out = output.assumingMemoryBound(to: UInt8.self)
        let context = sealing
        var length: Int32 = 0
        let done =
            EVP_EncryptInit_ex(context, nil, nil, nil, nonce.assumingMemoryBound(to: UInt8.self).baseAddress) == 1
            && Self.update(context, EVP_EncryptUpdate, additional, into: nil)
            && Self.update(context, EVP_EncryptUpdate, plaintext, into: out.baseAddress)
            && Self.update(context, EVP_EncryptUpdate, rest, into: out.baseAddress! + plaintext.count)
            && EVP_EncryptFinal_ex(context, out.baseAddress! + total, &length) == 1
            && EVP_CIPHER_CTX_ctrl(
                context, EVP_CTRL_AEAD_GET_TAG, Int32(Wire.sealTagLength), out.baseAddress! + total) == 1
        guard done else { throw LinkCryptoError(.library, "\(name) seal: \(Self.libraryText())") }
    }

    /// Opens `ciphertext` and `tag` with `additional` data under the 12 bytes at `nonce`, writing the plaintext to
    /// the first `ciphertext.count` bytes of `output`. A message that fails authentication throws
    /// ``LinkCryptoError/Code/badTag`` (`what` names it); what `output` holds then is not to be used.
    func open(
        _ ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, additional: UnsafeRawBufferPointer,
        nonce: UnsafeRawBufferPointer, what: @autoclosure () -> String, into output: UnsafeMutableRawBufferPointer
    ) throws(LinkCryptoError) {
        precondition(output.count >= ciphertext.count, "no room for the opened message")
        precondition(tag.count == Wire.sealTagLength, "a tag is \(Wire.sealTagLength) bytes")
        precondition(nonce.count == 12, "a nonce is 12 bytes")
        let out = output.assumingMemoryBound(to: UInt8.self)
        let context = opening
        // libcrypto takes the tag through a mutable pointer: it gets a copy.
        var tagCopy = (UInt64(0), UInt64(0))
        withUnsafeMutableBytes(of: &tagCopy) { $0.copyMemory(from: tag) }
        var length: Int32 = 0
        // Final writes nothing for these ciphers, but wants somewhere to write: the tag's copy, already handed over.
        let done = withUnsafeMutableBytes(of: &tagCopy) { tagBytes in
            let tagPointer = tagBytes.assumingMemoryBound(to: UInt8.self).baseAddress
            return EVP_DecryptInit_ex(context, nil, nil, nil, nonce.assumingMemoryBound(to: UInt8.self).baseAddress)
                == 1
                && Self.update(context, EVP_DecryptUpdate, additional, into: nil)
                && Self.update(context, EVP_DecryptUpdate, ciphertext, into: out.baseAddress)
                && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(Wire.sealTagLength), tagBytes.baseAddress)
                    == 1
                && EVP_DecryptFinal_ex(context, tagPointer, &length) == 1
        }
        guard done else {
            ERR_clear_error()
            throw LinkCryptoError(.badTag, "authentication failed (\(what()))")
        }
    }

    /// Feeds `input` to an update function (to `output`, or as additional data when `output` is nil); nothing to
    /// feed is a success.
    private static func update(
        _ context: OpaquePointer,
        _ function: (
            OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int32>?, UnsafePointer<UInt8>?,
            Int32
        ) -> Int32,
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutablePointer<UInt8>?
    ) -> Bool {
        guard !input.isEmpty else { return true }
        var length: Int32 = 0
        return function(
            context, output, &length, input.assumingMemoryBound(to: UInt8.self).baseAddress, Int32(input.count))
            == 1
    }

    /// libcrypto set up once, without the system's OpenSSL configuration file: what a machine configures for its
    /// TLS (a FIPS-only provider list, say) must not take the links' ciphers away.
    private static let initialized = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_LOAD_CONFIG), nil) == 1

    /// The text of libcrypto's oldest queued error (which is then cleared), or a placeholder.
    static func libraryText() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return "no error queued" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
