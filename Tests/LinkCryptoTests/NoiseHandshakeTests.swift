import Crypto
import LinkCrypto
import Testing

/// Both sides of a handshake, with fresh static and ephemeral keys.
struct Handshakes {
    static let prologue = Array("LanSession v3 tests".utf8)
    let initiatorStatic = Curve25519.KeyAgreement.PrivateKey()
    let responderStatic = Curve25519.KeyAgreement.PrivateKey()
    var initiator: NoiseHandshake
    var responder: NoiseHandshake

    init(
        initiatorPSK: SessionSecret?, responderPSK: SessionSecret?, initiatorCipher: NoiseCipher = .chaChaPoly,
        responderCipher: NoiseCipher = .chaChaPoly
    ) {
        initiator = NoiseHandshake(
            role: .initiator, staticKey: initiatorStatic, prologue: Self.prologue, psk: initiatorPSK,
            cipher: initiatorCipher)
        responder = NoiseHandshake(
            role: .responder, staticKey: responderStatic, prologue: Self.prologue, psk: responderPSK,
            cipher: responderCipher)
    }

    init(psk: SessionSecret?, cipher: NoiseCipher = .chaChaPoly) {
        self.init(initiatorPSK: psk, responderPSK: psk, initiatorCipher: cipher, responderCipher: cipher)
    }

    /// Runs the three messages (payloads unchecked), `tamper` changing each on the way (index 0, 1, 2).
    mutating func run(tamper: (Int, inout [UInt8]) -> Void = { _, _ in }) throws(LinkCryptoError) {
        for index in 0..<3 {
            let payload = Array("payload \(index)".utf8)
            if index % 2 == 0 {
                var message = try initiator.writeMessage(payload: payload)
                tamper(index, &message)
                _ = try responder.readMessage(message)
            } else {
                var message = try responder.writeMessage(payload: payload)
                tamper(index, &message)
                _ = try initiator.readMessage(message)
            }
        }
    }

    /// The keys of both sides after a complete handshake.
    static func keys(
        psk: SessionSecret? = nil, cipher: NoiseCipher = .chaChaPoly
    ) throws -> (initiator: LinkKeys, responder: LinkKeys) {
        var pair = Handshakes(psk: psk, cipher: cipher)
        try pair.run()
        return (try pair.initiator.split(), try pair.responder.split())
    }
}

func secret(_ text: String, session: String = "bubbles") throws -> SessionSecret {
    try SessionSecret(secret: Array(text.utf8), sessionName: session)
}

@Suite("The Noise handshake")
struct NoiseHandshakeTests {
    @Test(
        "both patterns complete: turns, payloads, static keys learnt, the same hash and keys", arguments: [false, true])
    func completes(psk: Bool) throws {
        var pair = Handshakes(psk: psk ? try secret("s3cret") : nil)
        #expect(pair.initiator.isMyTurn && !pair.responder.isMyTurn)
        let message1 = try pair.initiator.writeMessage(payload: [])
        #expect(message1.count == (psk ? 48 : 32))
        #expect(try pair.responder.readMessage(message1) == [])
        #expect(!pair.initiator.isMyTurn && pair.responder.isMyTurn)
        #expect(pair.responder.remoteStaticKey == nil)
        let message2 = try pair.responder.writeMessage(payload: Array("resp".utf8))
        #expect(message2.count == 32 + 48 + 4 + 16)
        #expect(pair.initiator.remoteStaticKey == nil)
        #expect(try pair.initiator.readMessage(message2) == Array("resp".utf8))
        #expect(pair.initiator.remoteStaticKey == Array(pair.responderStatic.publicKey.rawRepresentation))
        #expect(pair.responder.remoteStaticKey == nil)
        let message3 = try pair.initiator.writeMessage(payload: Array("init".utf8))
        #expect(message3.count == 48 + 4 + 16)
        #expect(pair.initiator.isComplete && !pair.responder.isComplete)
        #expect(try pair.responder.readMessage(message3) == Array("init".utf8))
        #expect(pair.responder.remoteStaticKey == Array(pair.initiatorStatic.publicKey.rawRepresentation))
        #expect(pair.responder.isComplete)
        #expect(!pair.initiator.isMyTurn && !pair.responder.isMyTurn)
        #expect(pair.initiator.handshakeHash == pair.responder.handshakeHash)
        #expect(pair.initiator.handshakeHash.count == 32)

        let (i, r) = (try pair.initiator.split(), try pair.responder.split())
        #expect(i.handshakeHash == r.handshakeHash)
        for (from, to) in [(i, r), (r, i)] {
            var sealer = from.makeRecordSealer()
            var sealed: [UInt8] = []
            let message = Array("over the stream".utf8)
            try message.withUnsafeBytes { try sealer.seal($0, into: &sealed) }
            var opener = to.makeRecordOpener()
            let opened = try sealed.withUnsafeBytes { try opener.open($0) }
            #expect(opened?.plaintext == message && opened?.consumed == sealed.count)

            var datagramSealer = from.makeDatagramSealer()
            var datagramOpener = to.makeDatagramOpener()
            let header: [UInt8] = [1, 2, 3]
            let datagram = try header.withUnsafeBytes { h in
                try message.withUnsafeBytes { try datagramSealer.seal(header: h, plaintext: $0) }
            }
            #expect(try datagram.withUnsafeBytes { try datagramOpener.open($0, headerLength: 3) } == message)
        }
    }

    @Test("a wrong pre-shared key fails when the responder reads message 3")
    func wrongPSK() throws {
        var pair = Handshakes(initiatorPSK: try secret("s3cret"), responderPSK: try secret("guess"))
        let message1 = try pair.initiator.writeMessage(payload: [])
        _ = try pair.responder.readMessage(message1)
        _ = try pair.initiator.readMessage(try pair.responder.writeMessage(payload: []))
        let message3 = try pair.initiator.writeMessage(payload: [])
        #expect(pair.initiator.isComplete)
        let error = #expect(throws: LinkCryptoError.self) { try pair.responder.readMessage(message3) }
        #expect(error?.code == .handshakeFailed)
        #expect(!pair.responder.isComplete)
        #expect(throws: LinkCryptoError.self) { try pair.responder.split() }
    }

    @Test("the same secret for another session is another key: the handshake fails")
    func otherSession() throws {
        var pair = Handshakes(
            initiatorPSK: try secret("s3cret", session: "bubbles"),
            responderPSK: try secret("s3cret", session: "counter"))
        #expect(throws: LinkCryptoError.self) { try pair.run() }
        #expect(!pair.responder.isComplete)
    }

    @Test("a pre-shared key on one side only fails", arguments: [false, true])
    func pskOnOneSide(initiatorHasIt: Bool) throws {
        let psk = try secret("s3cret")
        var pair = Handshakes(initiatorPSK: initiatorHasIt ? psk : nil, responderPSK: initiatorHasIt ? nil : psk)
        #expect(throws: LinkCryptoError.self) { try pair.run() }
        #expect(!(pair.initiator.isComplete && pair.responder.isComplete))
    }

    @Test("a flipped bit anywhere in any message fails the handshake", arguments: [false, true])
    func tampering(psk: Bool) throws {
        let lengths = [32 + 9 + (psk ? 16 : 0), 32 + 48 + 9 + 16, 48 + 9 + 16]
        for index in 0..<3 {
            for position in 0..<lengths[index] {
                var pair = Handshakes(psk: psk ? try secret("s3cret") : nil)
                let error = #expect(throws: LinkCryptoError.self, "message \(index + 1), byte \(position)") {
                    try pair.run { at, message in
                        #expect(message.count == lengths[at])
                        if at == index { message[position] ^= 0x01 }
                    }
                }
                #expect(error?.code == .handshakeFailed || error?.code == .badPublicKey)
                #expect(!pair.responder.isComplete)
            }
        }
    }

    @Test("message 1 replayed to a fresh responder gives another hash, and the old message 3 is refused")
    func replay() throws {
        var pair = Handshakes(psk: try secret("s3cret"))
        let message1 = try pair.initiator.writeMessage(payload: [])
        _ = try pair.responder.readMessage(message1)
        _ = try pair.initiator.readMessage(try pair.responder.writeMessage(payload: []))
        let message3 = try pair.initiator.writeMessage(payload: [])
        _ = try pair.responder.readMessage(message3)

        var fresh = NoiseHandshake(
            role: .responder, staticKey: pair.responderStatic, prologue: Handshakes.prologue, psk: try secret("s3cret"))
        _ = try fresh.readMessage(message1)
        _ = try fresh.writeMessage(payload: [])
        #expect(fresh.handshakeHash != pair.responder.handshakeHash)
        let error = #expect(throws: LinkCryptoError.self) { try fresh.readMessage(message3) }
        #expect(error?.code == .handshakeFailed)
    }

    @Test("out of turn: every call throws, and a failed handshake stays dead")
    func outOfTurn() throws {
        var pair = Handshakes(psk: nil)
        #expect(throws: LinkCryptoError.self) { try pair.responder.writeMessage(payload: []) }
        #expect(throws: LinkCryptoError.self) { try pair.initiator.readMessage([UInt8](repeating: 9, count: 32)) }
        // Both are dead now.
        #expect(!pair.initiator.isMyTurn)
        #expect(throws: LinkCryptoError.self) { try pair.initiator.writeMessage(payload: []) }
        #expect(throws: LinkCryptoError.self) { try pair.responder.readMessage([UInt8](repeating: 9, count: 32)) }
        #expect(throws: LinkCryptoError.self) { try pair.initiator.split() }

        var done = Handshakes(psk: nil)
        try done.run()
        #expect(throws: LinkCryptoError.self) { try done.initiator.writeMessage(payload: []) }
        #expect(throws: LinkCryptoError.self) { try done.responder.readMessage([]) }

        var early = Handshakes(psk: nil)
        _ = try early.initiator.writeMessage(payload: [])
        #expect(throws: LinkCryptoError.self) { try early.initiator.split() }
        #expect(throws: LinkCryptoError.self) { try early.initiator.writeMessage(payload: []) }
    }

    @Test("a short message kills the handshake; later calls throw")
    func shortMessage() throws {
        var pair = Handshakes(psk: nil)
        let error = #expect(throws: LinkCryptoError.self) { try pair.responder.readMessage([1, 2, 3]) }
        #expect(error?.code == .handshakeFailed)
        #expect(throws: LinkCryptoError.self) { try pair.responder.writeMessage(payload: []) }
        #expect(throws: LinkCryptoError.self) {
            try pair.responder.readMessage(try pair.initiator.writeMessage(payload: []))
        }
    }

    @Test("messages over 65535 bytes are refused")
    func tooLong() throws {
        var pair = Handshakes(psk: nil)
        #expect(throws: LinkCryptoError.self) {
            try pair.initiator.writeMessage(payload: [UInt8](repeating: 0, count: NoiseHandshake.maxMessageLength))
        }
        var reader = Handshakes(psk: nil)
        #expect(throws: LinkCryptoError.self) {
            try reader.responder.readMessage([UInt8](repeating: 1, count: NoiseHandshake.maxMessageLength + 1))
        }
        var largest = Handshakes(psk: nil)
        let message = try largest.initiator.writeMessage(
            payload: [UInt8](repeating: 0, count: NoiseHandshake.maxMessageLength - 32))
        #expect(message.count == NoiseHandshake.maxMessageLength)
        #expect(try largest.responder.readMessage(message).count == NoiseHandshake.maxMessageLength - 32)
    }

    @Test("a low-order ephemeral key (zero) is refused", arguments: [false, true])
    func lowOrder(psk: Bool) throws {
        var pair = Handshakes(psk: psk ? try secret("s3cret") : nil)
        _ = try pair.responder.readMessage(try pair.initiator.writeMessage(payload: []))
        var message2 = try pair.responder.writeMessage(payload: [])
        message2.replaceSubrange(0..<32, with: [UInt8](repeating: 0, count: 32))
        let error = #expect(throws: LinkCryptoError.self) { try pair.initiator.readMessage(message2) }
        #expect(error?.code == .badPublicKey)

        var responder = Handshakes(psk: nil).responder
        _ = try responder.readMessage([UInt8](repeating: 0, count: 32))
        let refused = #expect(throws: LinkCryptoError.self) { try responder.writeMessage(payload: []) }
        #expect(refused?.code == .badPublicKey)
    }

    @Test("both sides get the same pairing code; another handshake gets another")
    func pairingCodes() throws {
        let first = try Handshakes.keys(psk: try secret("s3cret"))
        let second = try Handshakes.keys(psk: try secret("s3cret"))
        #expect(first.initiator.pairingCode == first.responder.pairingCode)
        #expect(first.initiator.pairingCode.count == 6 && first.initiator.pairingCode.allSatisfy(\.isNumber))
        #expect(first.initiator.handshakeHash != second.initiator.handshakeHash)
        #expect(first.initiator.pairingCode != second.initiator.pairingCode)
    }

    @Test("an empty secret and a pre-shared key of a wrong length are refused")
    func secrets() throws {
        #expect(throws: LinkCryptoError.self) { try SessionSecret(secret: [], sessionName: "s") }
        #expect(throws: LinkCryptoError.self) { try SessionSecret(psk: [UInt8](repeating: 1, count: 31)) }
        #expect(throws: LinkCryptoError.self) { try SessionSecret(psk: [UInt8](repeating: 1, count: 33)) }
        _ = try SessionSecret(psk: [UInt8](repeating: 1, count: 32))
    }
}
