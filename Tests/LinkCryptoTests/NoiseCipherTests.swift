import Testing
import WireCodec

@testable import LinkCrypto

/// The cipher's choice from the two hellos, its names, and what a device offers by default.
@Suite("The cipher of a link")
struct NoiseCipherTests {
    static func hello(_ extensions: [HelloExtension]) -> Hello {
        Hello(peerID: PeerID(7), displayName: "p", sessionName: "s", extensions: extensions)
    }

    static func offering(_ ciphers: [NoiseCipher]) -> Hello {
        hello([.listenPort(47_000), NoiseCipher.helloExtension(offering: ciphers)])
    }

    /// A hello of an older release: no cipher list.
    static let older = hello([.listenPort(47_000)])

    @Test("both list aesgcm: AESGCM, whatever their order of preference")
    func bothAES() {
        for (one, other): ([NoiseCipher], [NoiseCipher]) in [
            ([.aesGCM, .chaChaPoly], [.aesGCM, .chaChaPoly]), ([.chaChaPoly, .aesGCM], [.aesGCM, .chaChaPoly]),
            ([.aesGCM], [.chaChaPoly, .aesGCM]), ([.aesGCM], [.aesGCM]),
        ] {
            #expect(NoiseCipher.choice(between: Self.offering(one), and: Self.offering(other)) == .aesGCM)
            #expect(NoiseCipher.choice(between: Self.offering(other), and: Self.offering(one)) == .aesGCM)
        }
    }

    @Test("one side without aesgcm, or without a list (an older release): ChaChaPoly")
    func chaChaPoly() {
        let offers: [Hello] = [Self.offering([.aesGCM, .chaChaPoly]), Self.offering([.chaChaPoly])]
        for hello in offers {
            #expect(NoiseCipher.choice(between: hello, and: Self.offering([.chaChaPoly])) == .chaChaPoly)
            #expect(NoiseCipher.choice(between: Self.offering([.chaChaPoly]), and: hello) == .chaChaPoly)
            #expect(NoiseCipher.choice(between: hello, and: Self.older) == .chaChaPoly)
            #expect(NoiseCipher.choice(between: Self.older, and: hello) == .chaChaPoly)
        }
        #expect(NoiseCipher.choice(between: Self.older, and: Self.older) == .chaChaPoly)
        #expect(NoiseCipher.taken(by: Self.older) == [.chaChaPoly])
    }

    @Test("a side limited to aesgcm and one without it have no cipher in common")
    func none() {
        let aesOnly = Self.offering([.aesGCM])
        #expect(NoiseCipher.choice(between: aesOnly, and: Self.offering([.chaChaPoly])) == nil)
        #expect(NoiseCipher.choice(between: Self.older, and: aesOnly) == nil)
        // A list of ciphers this release does not know takes none of its own.
        let future = Self.hello([.ciphers([9, 10])])
        #expect(NoiseCipher.taken(by: future) == [])
        #expect(NoiseCipher.choice(between: future, and: Self.offering([.aesGCM, .chaChaPoly])) == nil)
    }

    @Test("unknown numbers are skipped; an empty or too long list reads as none (ChaChaPoly)")
    func lists() {
        #expect(NoiseCipher.taken(by: Self.hello([.ciphers([9, 2, 1])])) == [.aesGCM, .chaChaPoly])
        let empty = Self.hello([HelloExtension(type: HelloExtension.ciphersType, value: [])])
        let long = Self.hello([
            HelloExtension(
                type: HelloExtension.ciphersType, value: [UInt8](repeating: 2, count: Wire.maxHelloCiphers + 1))
        ])
        for hello in [empty, long] {
            #expect(hello.ciphers == nil)
            #expect(NoiseCipher.taken(by: hello) == [.chaChaPoly])
            #expect(NoiseCipher.choice(between: hello, and: Self.offering([.aesGCM, .chaChaPoly])) == .chaChaPoly)
        }
        #expect(Self.offering([.aesGCM, .chaChaPoly]).ciphers == [2, 1])
    }

    @Test("protocol names, configuration names and the default offer")
    func names() {
        #expect(NoiseHandshake.protocolName(psk: false, cipher: .aesGCM) == "Noise_XX_25519_AESGCM_SHA256")
        #expect(NoiseHandshake.protocolName(psk: true, cipher: .aesGCM) == "Noise_XXpsk3_25519_AESGCM_SHA256")
        #expect(NoiseHandshake.protocolName(psk: true) == "Noise_XXpsk3_25519_ChaChaPoly_SHA256")
        #expect(NoiseCipher(name: "AESGCM") == .aesGCM && NoiseCipher(name: "chachapoly") == .chaChaPoly)
        #expect(NoiseCipher.list(parsing: "chachapoly") == [.chaChaPoly])
        #expect(NoiseCipher.list(parsing: " aesgcm , chachapoly") == [.aesGCM, .chaChaPoly])
        for bad in ["", "aes", "aesgcm,", "aesgcm,aesgcm", ",chachapoly"] {
            #expect(NoiseCipher.list(parsing: bad) == nil, "\(bad)")
        }
        #expect(NoiseCipher.defaultOffer == (CPUFeatures.hasAES ? [.aesGCM, .chaChaPoly] : [.chaChaPoly]))
    }
}
