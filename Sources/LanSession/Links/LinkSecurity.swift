import LinkCrypto
import NIOCore
import WireCodec

/// The Noise handshake and the sealing of one link, shared by its pipeline's handlers and the session core; all on
/// the link's event loop.
///
/// The order on the wire (docs/wire-format.md, section 9): both hellos in clear, then the three Noise messages in
/// `noise` frames, then only sealed records. The dialer (Noise's initiator) seals from the write after its message 3
/// and opens from the byte after message 2; the acceptor opens from the byte after message 3 and seals from then on,
/// and writes nothing between its message 2 and the dialer's message 3 (``awaitsLastMessage``).
/// The decoder takes the opener as soon as the core has set it (``takeOpener()``).
///
/// The two hellos choose the cipher (``NoiseCipher/choice(between:and:)``) and are the prologue: a cipher list
/// altered on the way fails the handshake instead of downgrading it.
final class LinkSecurity {
    let role: LinkStateMachine.Role
    let identity: DeviceIdentity
    let psk: SessionSecret?
    /// The hello this side sent, and as it went on the wire (the frame).
    private var sentHello: Hello?
    private(set) var localHello: [UInt8] = []
    private(set) var handshake: NoiseHandshake?
    private(set) var keys: LinkKeys?
    private var sealer: RecordSealer?
    /// Set when the handshake completes; the decoder takes it for the bytes that follow.
    private var pendingOpener: RecordOpener?
    var datagramSealer: DatagramSealer?
    var datagramOpener: DatagramOpener?
    /// The peer's static key and payload, once its handshake message carried them.
    private(set) var remoteKey: [UInt8]?
    private(set) var remotePayload: HandshakePayload?
    /// Acceptor: message 2 is written and message 3 not yet read. This side has no keys to seal with, and the dialer
    /// opens every byte after message 2, so nothing is written meanwhile (docs/wire-format.md, section 9.3).
    private(set) var awaitsLastMessage = false

    init(role: LinkStateMachine.Role, identity: DeviceIdentity, psk: SessionSecret?) {
        self.role = role
        self.identity = identity
        self.psk = psk
    }

    /// The handshake is complete and the keys are in use.
    var isEstablished: Bool { keys != nil }

    /// The cipher that seals the link, once the handshake is complete.
    var cipher: NoiseCipher? { keys?.cipher }

    /// Keeps the hello this side sends, for the cipher's choice and the prologue.
    func remember(sent hello: Hello) throws(WireError) {
        localHello = try StreamFraming.encode(.hello(hello), limits: .default)
        sentHello = hello
    }

    /// What the prologue binds: the label, then the dialer's and the acceptor's hello frames as sent, each with a
    /// `u32le` length.
    static func prologue(dialerHello: [UInt8], acceptorHello: [UInt8]) -> [UInt8] {
        var prologue = Array(NoisePrologue.label.utf8)
        for hello in [dialerHello, acceptorHello] {
            let length = UInt32(hello.count)
            prologue += [
                UInt8(length & 0xff), UInt8(length >> 8 & 0xff), UInt8(length >> 16 & 0xff), UInt8(length >> 24),
            ]
            prologue += hello
        }
        return prologue
    }

    /// Starts the handshake once the peer's hello arrived, with the cipher the two hellos choose; the dialer's
    /// message 1 is returned, to be sent. Hellos without a cipher in common fail.
    func begin(remoteHello: Hello) throws(LinkCryptoError) -> [UInt8]? {
        guard let sentHello else { throw LinkCryptoError(.handshakeFailed, "this side sent no hello") }
        guard let cipher = NoiseCipher.choice(between: sentHello, and: remoteHello) else {
            let (mine, theirs) = (NoiseCipher.taken(by: sentHello), NoiseCipher.taken(by: remoteHello))
            throw LinkCryptoError(.handshakeFailed, "no cipher in common: this side takes \(mine), the peer \(theirs)")
        }
        let remote: [UInt8]
        do {
            remote = try StreamFraming.encode(.hello(remoteHello), limits: .default)
        } catch {
            throw LinkCryptoError(.handshakeFailed, "cannot re-encode the peer's hello: \(error)")
        }
        let dialer = role == .dialer
        var handshake = NoiseHandshake(
            role: dialer ? .initiator : .responder, staticKey: identity.staticKey,
            prologue: Self.prologue(
                dialerHello: dialer ? localHello : remote, acceptorHello: dialer ? remote : localHello),
            psk: psk, cipher: cipher)
        defer { self.handshake = handshake }
        return dialer ? try handshake.writeMessage(payload: []) : nil
    }

    /// Reads the peer's handshake message; returns the message to answer with, if it is this side's turn (with
    /// `payload`, this side's ``HandshakePayload``, where the pattern carries one).
    func read(_ message: [UInt8], payload: () throws(WireError) -> [UInt8]) throws(LinkCryptoError) -> [UInt8]? {
        guard var handshake else { throw LinkCryptoError(.handshakeFailed, "a handshake message before the hellos") }
        defer { self.handshake = handshake }
        let received = try handshake.readMessage(message)
        if let key = handshake.remoteStaticKey, remoteKey == nil {
            remoteKey = key
            do {
                remotePayload = try HandshakePayload.decode(received)
            } catch {
                throw LinkCryptoError(.handshakeFailed, "the peer's handshake payload: \(error)")
            }
        }
        var reply: [UInt8]?
        if !handshake.isComplete && handshake.isMyTurn {
            let bytes: [UInt8]
            do {
                bytes = try payload()
            } catch {
                throw LinkCryptoError(.handshakeFailed, "cannot encode this side's payload: \(error)")
            }
            reply = try handshake.writeMessage(payload: bytes)
            awaitsLastMessage = role == .acceptor
        }
        if handshake.isComplete {
            awaitsLastMessage = false
            let keys = try handshake.split()
            self.keys = keys
            pendingOpener = keys.makeRecordOpener()
            datagramSealer = keys.makeDatagramSealer()
            datagramOpener = keys.makeDatagramOpener()
        }
        return reply
    }

    /// The code both sides show when pairing; nil before the handshake completed.
    var pairingCode: String? { keys?.pairingCode }

    /// Seals every write from now on.
    func startSealing() {
        sealer = keys?.makeRecordSealer()
    }

    var isSealing: Bool { sealer != nil }

    /// The opener for what follows the handshake; taken once.
    func takeOpener() -> RecordOpener? {
        defer { pendingOpener = nil }
        return pendingOpener
    }

    /// Seals `buffer`'s readable bytes, then `next`'s, as records (as if they were one buffer: a record may hold
    /// the end of one and the start of the other), into a buffer of their own.
    func seal(
        _ buffer: ByteBuffer, then next: ByteBuffer? = nil, allocator: ByteBufferAllocator
    ) throws(LinkCryptoError) -> ByteBuffer {
        guard var sealer else { return buffer }
        defer { self.sealer = sealer }
        let size = RecordSealer.sealedSize(of: buffer.readableBytes + (next?.readableBytes ?? 0))
        var output = allocator.buffer(capacity: size)
        var failure: LinkCryptoError?
        _ = buffer.withUnsafeReadableBytes { plaintext in
            (next ?? ByteBuffer()).withUnsafeReadableBytes { rest in
                output.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { raw in
                    do throws(LinkCryptoError) {
                        try sealer.seal(plaintext, rest, into: UnsafeMutableRawBufferPointer(rebasing: raw[..<size]))
                        return size
                    } catch {
                        failure = error
                        return 0
                    }
                }
            }
        }
        if let failure { throw failure }
        return output
    }
}

/// The constant of the prologue (docs/wire-format.md, section 9.1).
enum NoisePrologue {
    static let label = "LanSession v3 prologue"
}
