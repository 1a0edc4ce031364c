import Crypto
import Foundation
import Testing
import WireCodec

@testable import LinkCrypto

/// The vectors Tests/Interop/noise_vectors.py prints with Python's `noiseprotocol` package, an independent
/// implementation of Noise: the same fixed keys, prologue, pre-shared key and payloads give the same bytes here.
@Suite("Noise test vectors from an independent implementation")
struct NoiseVectorTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let protocolName: String
        let psk: Bool
        let cipher: NoiseCipher
        let message1: String
        let message2: String
        let message3: String
        let handshakeHash: String
        /// "ping", the initiator's first transport message (nonce 0).
        let ping: String
        /// "pong", the responder's first transport message (nonce 0).
        let pong: String
        /// "a" and "b", the initiator's next (nonces 1 and 2), then "c" (nonce 3) after a `Rekey()`.
        let rekeyA: String
        let rekeyB: String
        let rekeyC: String
        let datagramKey1: String
        let datagramKey2: String
        /// The initiator's first sealed datagram (counter 1): header `88 77 66 55 44 33 22 11 05`, frame `02 27 01`.
        let datagram: String
        let pairingCode: String

        var testDescription: String { protocolName }
    }

    static let initiatorStatic = "afdb168c14f76aa94cd26066d92499134bfe1ed681d279b39aa53c09adaedae7"
    static let initiatorEphemeral = "aeb32fab4b915ca4881189e25fc9e6f7713d72cf2567c4acbc3f3db653656c09"
    static let responderStatic = "bbf036f95c76855158a869b0e9b678fcee5ccf45a1b7429553c8ba6e6e0f339e"
    static let responderEphemeral = "8daf806bcaebe67cdf5d3946db2a07c8fe087d2fb7b85f81a8ddf55aa0eb5b04"
    static let prologue = Array("LanSession v3 vectors".utf8)

    static let vectors = [
        Vector(
            protocolName: "Noise_XX_25519_ChaChaPoly_SHA256", psk: false, cipher: .chaChaPoly,
            message1: "532b2be7dbb1e6b258d75263b4e207516248573e50ab0bf63e0ebd8c2601fc15",
            message2: "97b88e38a0744da209edd52f742741840bcc791037936c610c1b4b7ed305912e"
                + "7717ec428d6479081a105e0a38eb325c7368f93f2b14e2b11949110eb69526bb"
                + "2cbce3be33c694d57857ee3689a0a0b10654c752c38bc903154845b7d22ca710"
                + "971020b8",
            message3: "b33807ce0493b1ad2f588dcb3b7e0f62ad507ca3982a75814490a5894d49011c"
                + "a62cd9ccaed2e2c63078b881469cb21220c501eda164b87c62a7a40ec282fa58"
                + "24210e8a",
            handshakeHash: "9811c9189c4956425e441fd92382e985b86550b104affd0ba007246a9b3740f1",
            ping: "52c8f38c015cd4d45df1fcbea99a9ca90e0de184",
            pong: "b75a17d6b4c93203b0db94a4b16226eb4a9585a1",
            rekeyA: "23932ad2e99a60a0d1ae9b8bbd818fa3a2",
            rekeyB: "6c7ace613b750b745383453fdddd3632e3",
            rekeyC: "b81043304ee77452b96ac75b759e918a69",
            datagramKey1: "2084f8c738d0126507e5d70aadffdcc8453388716ab71837e44ef931f9a73755",
            datagramKey2: "17ed41d8fb6ee2988e290fd49864f4f38ee1d72e18504bffe940f17294fa8400",
            datagram: "8877665544332211050100000000000000e1"
                + "e0c9d8960d834c76b1da8d03017d3cb97548",
            pairingCode: "583771"),
        Vector(
            protocolName: "Noise_XXpsk3_25519_ChaChaPoly_SHA256", psk: true, cipher: .chaChaPoly,
            message1: "532b2be7dbb1e6b258d75263b4e207516248573e50ab0bf63e0ebd8c2601fc15"
                + "c5763e53fc1c5365a46780b985a41a44",
            message2: "97b88e38a0744da209edd52f742741840bcc791037936c610c1b4b7ed305912e"
                + "9f0af3f68a6d0f0df56f6ba4fb6360945c2dd1d557ca688fb0565f65451f213d"
                + "0ec4cb8126eb80d08b5c661f270a78f75f99649fa62eb47362285dc7bbab066f"
                + "cac871ed",
            message3: "f2be48b98e00c6c59bd9da0e989f9032580c743ec82ccc20ec98f5997bdbb698"
                + "040a399e6f8bcc809c3fc9bba2d4a0058a6b49562482ae5c2c0336f35c6661a8"
                + "60cdede2",
            handshakeHash: "04740a78d931bebb66cf77a8d5e6feb9284ca84332fb9241fb4c2431ce9cc330",
            ping: "13fad2dad392e8bef7a591c076e50c5bed961561",
            pong: "3c87d6fceb39151f3436f2a6ff7bcee3ab34e01a",
            rekeyA: "5c56a1545ba8b9dc823e6005b0960b443c",
            rekeyB: "07f239f63b2c7df0787f8889b85ac41a0a",
            rekeyC: "fa4b72520f05ca17daaa386f232de83c71",
            datagramKey1: "3c5e9f8d25fbc11fd675c4c23e2f9cd394098f168448f09fbe7cb12460854681",
            datagramKey2: "6f254cc35e9ae12878a9eff7a87832131459a33ad4a3022980e157ec2621ed7a",
            datagram: "887766554433221105010000000000000049"
                + "98caa9476c6048569974b9424481e259e9af",
            pairingCode: "407760"),
        Vector(
            protocolName: "Noise_XX_25519_AESGCM_SHA256", psk: false, cipher: .aesGCM,
            message1: "532b2be7dbb1e6b258d75263b4e207516248573e50ab0bf63e0ebd8c2601fc15",
            message2: "97b88e38a0744da209edd52f742741840bcc791037936c610c1b4b7ed305912e"
                + "94f6737509999d24b392f3c4f1b180511222cb5b21c4ed063c71995936c028f0"
                + "3598d86a560f3cf49d1da88e36c53f12c99b07ffe061abfa63457c4c0578efe8"
                + "603f6d34",
            message3: "d7d963b84ade6778b640dfe41cb2379586d7b9911fd1d83a8674aa4be95c576e"
                + "06e0a61561f71f044e4c0e2b728eb259087d9a7bb1ca95364250f1d02ecce985"
                + "a0958201",
            handshakeHash: "8d33476274cbe3f42e96ec526bb99d44029a67e6dd4b1369dc1300e141c65053",
            ping: "9a3583f449a836f7b9a4e0f7f831df0e20b6b65c",
            pong: "16fae77c3f6dae306dbd56446ba0f70f4269217a",
            rekeyA: "fbd7c47c58622dd3c51f7975a6e475c1eb",
            rekeyB: "2671d2b73b58ec9dc59b2927104c958031",
            rekeyC: "845ed740f776a5f8ba540252079a7c6533",
            datagramKey1: "48ff7066d13b8255a241414278debb134da51477cbe3556b409db134afcff4d7",
            datagramKey2: "a6604816a2b0d20cec485e844f82a237f1aa74565f76adc7bda82d7c1fc2e29f",
            datagram: "8877665544332211050100000000000000d5"
                + "554b5ba14766c5fd926d61919a34733fc494",
            pairingCode: "447134"),
        Vector(
            protocolName: "Noise_XXpsk3_25519_AESGCM_SHA256", psk: true, cipher: .aesGCM,
            message1: "532b2be7dbb1e6b258d75263b4e207516248573e50ab0bf63e0ebd8c2601fc15"
                + "fd87cf18b10f9857c4808b9fadd7d67f",
            message2: "97b88e38a0744da209edd52f742741840bcc791037936c610c1b4b7ed305912e"
                + "6b8d35228417191d1ed8007eaac7cba26f7c8f77e63f51d5b94b38250c0c653d"
                + "9a0b8fff50f3be19028797fc0ebed54e0fec19370b783197d1a4e8814638549b"
                + "d9cc74ce",
            message3: "da69b31d2254ac67bc4354c7ab9a095a999e3ae9b600480e16c0b5576fe41d4e"
                + "01e8322a32f1a923d19ed67d359899e6731b5fb920edbdae5c15e286eb3c07ee"
                + "06dfff21",
            handshakeHash: "ea94bc6302ca4ababc87be7aa3af6ef73634a13e3e42594121dd4f27e69b0a6a",
            ping: "2344699c81333a0496334304cd25641c42f184b9",
            pong: "1213471ac6252b2d1071e5711febfe33fcf139ac",
            rekeyA: "aba2f08d286dcb4c846b270f764583d502",
            rekeyB: "7d46d04dd2d27cfc166c229374f26d7ae4",
            rekeyC: "4fbe32e56bb6445d819f19cc10440f0fa6",
            datagramKey1: "449ce2aa04f3fa7599b4871c4212283878efde80fb7fd0857ab52e2ed18309d7",
            datagramKey2: "7f7a8e736cf7dd010cc96ee2eb4bcac309fe44d97d6aab636c90a7b69df164e2",
            datagram: "88776655443322110501000000000000007f"
                + "3fb7edd142f12683f254781545a5e31a9273",
            pairingCode: "656022"),
    ]

    static func key(_ hex: String) throws -> Curve25519.KeyAgreement.PrivateKey {
        try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: bytes(hex))
    }

    /// A record: the transport message after its `u16le` length.
    static func record(_ message: [UInt8]) -> [UInt8] {
        [UInt8(message.count & 0xff), UInt8(message.count >> 8)] + message
    }

    @Test("the protocol names are Noise's")
    func names() {
        for vector in Self.vectors {
            #expect(NoiseHandshake.protocolName(psk: vector.psk, cipher: vector.cipher) == vector.protocolName)
        }
    }

    @Test(
        "every handshake message, the hash, the transport messages, the datagram keys and the code match",
        arguments: vectors)
    func vector(_ vector: Vector) throws {
        let psk = vector.psk ? try SessionSecret(psk: (1...32).map { UInt8($0) }) : nil
        var initiator = NoiseHandshake(
            role: .initiator, staticKey: try Self.key(Self.initiatorStatic), prologue: Self.prologue, psk: psk,
            cipher: vector.cipher, ephemeral: try Self.key(Self.initiatorEphemeral))
        var responder = NoiseHandshake(
            role: .responder, staticKey: try Self.key(Self.responderStatic), prologue: Self.prologue, psk: psk,
            cipher: vector.cipher, ephemeral: try Self.key(Self.responderEphemeral))

        let message1 = try initiator.writeMessage(payload: [])
        #expect(message1 == bytes(vector.message1))
        #expect(try responder.readMessage(bytes(vector.message1)) == [])
        let message2 = try responder.writeMessage(payload: Array("resp".utf8))
        #expect(message2 == bytes(vector.message2))
        #expect(try initiator.readMessage(bytes(vector.message2)) == Array("resp".utf8))
        let message3 = try initiator.writeMessage(payload: Array("init".utf8))
        #expect(message3 == bytes(vector.message3))
        #expect(try responder.readMessage(bytes(vector.message3)) == Array("init".utf8))
        #expect(initiator.isComplete && responder.isComplete)
        #expect(initiator.handshakeHash == bytes(vector.handshakeHash))
        #expect(responder.handshakeHash == bytes(vector.handshakeHash))
        #expect(initiator.remoteStaticKey == Array(try Self.key(Self.responderStatic).publicKey.rawRepresentation))
        #expect(responder.remoteStaticKey == Array(try Self.key(Self.initiatorStatic).publicKey.rawRepresentation))

        let initiatorKeys = try initiator.split()
        let responderKeys = try responder.split()
        #expect(initiatorKeys.cipher == vector.cipher && responderKeys.cipher == vector.cipher)
        #expect(initiatorKeys.handshakeHash == bytes(vector.handshakeHash))
        #expect(initiatorKeys.pairingCode == vector.pairingCode)
        #expect(responderKeys.pairingCode == vector.pairingCode)
        #expect(initiatorKeys.sendDatagrams.withUnsafeBytes { Array($0) } == bytes(vector.datagramKey1))
        #expect(initiatorKeys.receiveDatagrams.withUnsafeBytes { Array($0) } == bytes(vector.datagramKey2))
        #expect(responderKeys.sendDatagrams.withUnsafeBytes { Array($0) } == bytes(vector.datagramKey2))
        #expect(responderKeys.receiveDatagrams.withUnsafeBytes { Array($0) } == bytes(vector.datagramKey1))

        // A sealed datagram: the counter field u64le with both ciphers, the nonce in the cipher's byte order.
        let header: [UInt8] = [0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x05]
        let frame: [UInt8] = [0x02, 0x27, 0x01]
        var datagramSealer = initiatorKeys.makeDatagramSealer()
        let datagram = try header.withUnsafeBytes { h in
            try frame.withUnsafeBytes { try datagramSealer.seal(header: h, plaintext: $0) }
        }
        #expect(datagram == bytes(vector.datagram))
        var datagramOpener = responderKeys.makeDatagramOpener()
        #expect(
            try bytes(vector.datagram).withUnsafeBytes { try datagramOpener.open($0, headerLength: header.count) }
                == frame)

        // Records: Swift seals what Python sealed, byte for byte (and Python opened those), and opens Python's.
        var initiatorSealer = initiatorKeys.makeRecordSealer(rekeyInterval: 3)
        var responderOpener = responderKeys.makeRecordOpener(rekeyInterval: 3)
        for (plaintext, expected) in [
            ("ping", vector.ping), ("a", vector.rekeyA), ("b", vector.rekeyB), ("c", vector.rekeyC),
        ] {
            var sealed: [UInt8] = []
            try Array(plaintext.utf8).withUnsafeBytes { try initiatorSealer.seal($0, into: &sealed) }
            #expect(sealed == Self.record(bytes(expected)), "\(plaintext)")
            let opened = try Self.record(bytes(expected)).withUnsafeBytes { try responderOpener.open($0) }
            #expect(opened?.plaintext == Array(plaintext.utf8))
        }
        var responderSealer = responderKeys.makeRecordSealer()
        var sealed: [UInt8] = []
        try Array("pong".utf8).withUnsafeBytes { try responderSealer.seal($0, into: &sealed) }
        #expect(sealed == Self.record(bytes(vector.pong)))
        var initiatorOpener = initiatorKeys.makeRecordOpener()
        let opened = try Self.record(bytes(vector.pong)).withUnsafeBytes { try initiatorOpener.open($0) }
        #expect(opened?.plaintext == Array("pong".utf8))
    }
}

/// The bytes of a hex string.
func bytes(_ hex: String) -> [UInt8] {
    let digits = Array(hex.utf8)
    return stride(from: 0, to: digits.count, by: 2).map {
        UInt8(String(decoding: digits[$0..<($0 + 2)], as: UTF8.self), radix: 16)!
    }
}

/// docs/wire-format.md section 9.7 lists the same vectors.
@Suite("The spec's handshake vectors")
struct NoiseVectorSpecTests {
    @Test("section 9.7 of docs/wire-format.md lists exactly the vectors checked here")
    func specMatches() throws {
        let spec = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/wire-format.md")
        let text = try String(contentsOf: spec, encoding: .utf8)
        var rows: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| XX") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 3 else { continue }
            rows["\(cells[0]) \(cells[1])"] = cells[2].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
        }
        var expected: [String: String] = [:]
        for vector in NoiseVectorTests.vectors {
            let pattern = (vector.psk ? "XXpsk3" : "XX") + (vector.cipher == .aesGCM ? " AESGCM" : "")
            let values = [
                ("message1", vector.message1), ("message2", vector.message2), ("message3", vector.message3),
                ("handshakeHash", vector.handshakeHash), ("ping", vector.ping), ("pong", vector.pong),
                ("rekey-a", vector.rekeyA), ("rekey-b", vector.rekeyB), ("rekey-c", vector.rekeyC),
                ("datagramKey1", vector.datagramKey1), ("datagramKey2", vector.datagramKey2),
                ("datagram", vector.datagram), ("pairingCode", vector.pairingCode),
            ]
            for (name, value) in values { expected["\(pattern) \(name)"] = value }
        }
        #expect(rows == expected)
    }
}
