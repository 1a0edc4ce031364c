/// A Noise cipher on libcrypto's ``EVPAEAD``: what differs between the suites is the algorithm and how the nonce is
/// laid out; sealing and opening with a counter's nonce are the same for all of them, here.
protocol EVPCipher: AEADCipher {
    /// The libcrypto AEAD with the key, one context per direction.
    var aead: EVPAEAD { get }
    /// Noise's 12-byte nonce for `counter`, as this cipher lays it out.
    static func nonce(_ counter: UInt64) -> (UInt32, UInt32, UInt32)
}

extension EVPCipher {
    func seal(
        _ plaintext: UnsafeRawBufferPointer, _ rest: UnsafeRawBufferPointer, additional: UnsafeRawBufferPointer,
        counter: UInt64, into output: UnsafeMutableRawBufferPointer
    ) throws(LinkCryptoError) {
        var nonce = Self.nonce(counter)
        try withUnsafeBytes(of: &nonce) { nonce throws(LinkCryptoError) in
            try aead.seal(plaintext, rest, additional: additional, nonce: nonce, into: output)
        }
    }

    func open(
        _ ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, additional: UnsafeRawBufferPointer,
        counter: UInt64, into output: UnsafeMutableRawBufferPointer
    ) throws(LinkCryptoError) {
        var nonce = Self.nonce(counter)
        try withUnsafeBytes(of: &nonce) { nonce throws(LinkCryptoError) in
            try aead.open(
                ciphertext, tag: tag, additional: additional, nonce: nonce, what: "nonce \(counter)", into: output)
        }
    }
}
