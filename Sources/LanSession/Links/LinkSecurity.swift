import LinkCrypto
import NIOCore
import WireCodec

/// The secret handshake and the sealing of one link, shared by its pipeline's handlers and the session core; all
/// on the link's event loop.
///
/// The order on the wire: both hellos in clear, then each side's `auth` in clear, then only sealed records. This
/// side seals from the write after its `auth` (``startSealing()``); it opens from the byte after the peer's `auth`
/// (``WireFrameDecoder`` switches when it passes one on, with the keys the core derived from the peer's hello).
final class LinkSecurity {
    let handshake: SecretHandshake
    let secret: SessionSecret
    /// The hello this side sent, as it went on the wire.
    var localHello: [UInt8] = []
    private(set) var keys: LinkKeys?
    private var sealer: RecordSealer?
    /// Set from the peer's hello; used from the byte after its `auth`.
    private(set) var pendingOpener: RecordOpener?
    var datagramSealer: DatagramSealer?
    var datagramOpener: DatagramOpener?
    /// The peer's proof checked.
    private(set) var isEstablished = false

    init(role: LinkStateMachine.Role, secret: SessionSecret) {
        self.handshake = SecretHandshake(role: role == .dialer ? .dialer : .acceptor)
        self.secret = secret
    }

    /// Derives the link's keys from the peer's hello; returns this side's proof.
    func derive(remoteHello: Hello) throws(LinkCryptoError) -> [UInt8] {
        guard let remoteKey = remoteHello.authenticationKey else {
            throw LinkCryptoError(.badPublicKey, "the peer's hello has no key: it has no secret")
        }
        let remote: [UInt8]
        do {
            remote = try StreamFraming.encode(.hello(remoteHello), limits: .default)
        } catch {
            throw LinkCryptoError(.badPublicKey, "cannot re-encode the peer's hello: \(error)")
        }
        let keys = try handshake.keys(secret: secret, localHello: localHello, remoteHello: remote, remoteKey: remoteKey)
        self.keys = keys
        pendingOpener = keys.makeRecordOpener()
        return keys.proof
    }

    /// Checks the peer's proof; the datagram keys are usable afterwards.
    func verify(peerProof: [UInt8]) throws(LinkCryptoError) {
        guard let keys else { throw LinkCryptoError(.proofMismatch, "a proof before the keys") }
        try keys.verify(peerProof: peerProof)
        isEstablished = true
        datagramSealer = keys.makeDatagramSealer()
        datagramOpener = keys.makeDatagramOpener()
    }

    /// Seals every write from now on.
    func startSealing() {
        sealer = keys?.makeRecordSealer()
    }

    var isSealing: Bool { sealer != nil }

    /// The opener for what follows the peer's `auth`; taken once.
    func takeOpener() -> RecordOpener? {
        defer { pendingOpener = nil }
        return pendingOpener
    }

    /// Seals `buffer`'s readable bytes as records.
    func seal(_ buffer: ByteBuffer, allocator: ByteBufferAllocator) throws(LinkCryptoError) -> ByteBuffer {
        guard var sealer else { return buffer }
        defer { self.sealer = sealer }
        var output: [UInt8] = []
        output.reserveCapacity(buffer.readableBytes + 32)
        let result: Result<Void, LinkCryptoError> = buffer.withUnsafeReadableBytes { raw in
            Result { () throws(LinkCryptoError) in try sealer.seal(raw, into: &output) }
        }
        try result.get()
        return allocator.buffer(bytes: output)
    }
}

/// Seals what a link writes once its side of the secret handshake is done.
final class LinkSealingHandler: ChannelOutboundHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let security: LinkSecurity

    init(security: LinkSecurity) {
        self.security = security
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard security.isSealing else { return context.write(data, promise: promise) }
        do {
            let sealed = try security.seal(unwrapOutboundIn(data), allocator: context.channel.allocator)
            context.write(wrapOutboundOut(sealed), promise: promise)
        } catch {
            promise?.fail(error)
            context.fireErrorCaught(error)
        }
    }
}
