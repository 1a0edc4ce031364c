import Crypto
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import SwiftASN1
import X509

/// The baseline for sealed messages: RawSink's frames over TLS 1.3 (swift-nio-ssl, BoringSSL) on 127.0.0.1, the
/// client flushing once per batch of frames and the server counting the plaintext bytes it decrypts.
///
/// The suite is TLS_AES_128_GCM_SHA256. BoringSSL does not let TLS 1.3 suites be configured, so it cannot be set
/// here; it is what both ends choose by default on a CPU with AES instructions. `start` reads the suite from the
/// server's hello and refuses to go on with any other, so that the figure is always AES-GCM's.
///
/// The server's certificate is made at start (P-256, self-signed, for "localhost"), and the client trusts exactly
/// that certificate with full verification, as a real client would. Both ends finish the handshake inside `start`,
/// so `send` times the data alone. Records are BoringSSL's default size: one record per frame written, and a 60 KiB
/// frame in 16 KiB records.
final class TLSSink: Sendable {
    /// The only suite the baseline runs with (its IANA number, as the server's hello carries it).
    static let suite: UInt16 = 0x1301
    static let suiteName = "TLS_AES_128_GCM_SHA256"
    /// The name in the certificate, checked by the client (the address it dials is 127.0.0.1).
    static let serverName = "localhost"

    private let server: any Channel
    private let client: any Channel
    private let counted: EventLoopFuture<Void>

    private init(server: any Channel, client: any Channel, counted: EventLoopFuture<Void>) {
        self.server = server
        self.client = client
        self.counted = counted
    }

    /// A TLS server expecting `total` plaintext bytes, and a client connected to it with the handshake done.
    static func start(group: MultiThreadedEventLoopGroup, expecting total: Int) async throws -> TLSSink {
        let (certificate, key) = try selfSignedCertificate()
        var serverConfiguration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
        serverConfiguration.minimumTLSVersion = .tlsv13
        serverConfiguration.maximumTLSVersion = .tlsv13
        var clientConfiguration = TLSConfiguration.makeClientConfiguration()
        clientConfiguration.minimumTLSVersion = .tlsv13
        clientConfiguration.maximumTLSVersion = .tlsv13
        clientConfiguration.certificateVerification = .fullVerification
        clientConfiguration.trustRoots = .certificates([certificate])
        // Made here and not on an event loop: a context may read files while it is set up.
        let serverContext = try NIOSSLContext(configuration: serverConfiguration)
        let clientContext = try NIOSSLContext(configuration: clientConfiguration)

        let serverLoop = group.next()
        let done = serverLoop.makePromise(of: Void.self)
        let serverReady = serverLoop.makePromise(of: Void.self)
        let server = try await ServerBootstrap(group: serverLoop)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(NIOSSLServerHandler(context: serverContext))
                    try pipeline.addHandler(HandshakeWatcher(done: serverReady))
                    try pipeline.addHandler(ByteCounter(total: total, done: done))
                }
            }
            .bind(host: ThroughputBench.loopback, port: 0).get()

        let clientLoop = group.next()
        let clientReady = clientLoop.makePromise(of: Void.self)
        let suiteSeen = clientLoop.makePromise(of: UInt16.self)
        let client: any Channel
        do {
            client = try await ClientBootstrap(group: clientLoop)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        // Nearest the socket, so that it sees the server's hello before it is decrypted.
                        try pipeline.addHandler(SuiteReader(suite: suiteSeen))
                        try pipeline.addHandler(
                            NIOSSLClientHandler(context: clientContext, serverHostname: serverName))
                        try pipeline.addHandler(HandshakeWatcher(done: clientReady))
                    }
                }
                .connect(to: server.localAddress!).get()
        } catch {
            try? await server.close()
            throw error
        }
        let sink = TLSSink(server: server, client: client, counted: done.futureResult)
        do {
            try await clientReady.futureResult.get()
            try await serverReady.futureResult.get()
            let suite = try await suiteSeen.futureResult.get()
            guard suite == Self.suite else {
                throw BenchFailure(
                    "TLS 1.3 chose suite 0x\(String(suite, radix: 16)), not \(suiteName): the baseline is AES-GCM's")
            }
        } catch {
            await sink.close()
            throw error
        }
        return sink
    }

    /// Writes `count` frames of `size` bytes, flushing every `batch` frames, and waits until the server decrypted
    /// and counted all.
    func send(count: Int, size: Int, batch: Int) async throws {
        try await client.writeFrames(count: count, size: size, batch: batch)
        try await counted.get()
    }

    func close() async {
        try? await client.close()
        try? await server.close()
    }

    /// A P-256 certificate for `serverName`, signed by its own key, valid from a minute ago for an hour.
    private static func selfSignedCertificate() throws -> (NIOSSLCertificate, NIOSSLPrivateKey) {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("throughput-bench") }
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now - 60,
            notValidAfter: now + 3_600,
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            // No key usage extension: BoringSSL takes a certificate as self-signed (and so as its own trust anchor)
            // only if a key usage it carries allows signing certificates, which this one, a server's, should not.
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName(serverName)])
            },
            issuerPrivateKey: Certificate.PrivateKey(key))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return (
            try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der),
            try NIOSSLPrivateKey(bytes: Array(key.derRepresentation), format: .der)
        )
    }
}

/// Fulfils its promise when the TLS handshake of its connection is complete, and fails it if the connection ends or
/// fails first.
private final class HandshakeWatcher: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    private let done: EventLoopPromise<Void>
    /// Whether the promise is fulfilled or failed: what comes after (the close at the end) is not its business.
    private var settled = false

    init(done: EventLoopPromise<Void>) { self.done = done }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent { settle(.success(())) }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        settle(.failure(error))
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        settle(.failure(ChannelError.inputClosed))
        context.fireChannelInactive()
    }

    private func settle(_ result: Result<Void, any Error>) {
        guard !settled else { return }
        settled = true
        done.completeWith(result)
    }
}

/// Reads the cipher suite from the first TLS record the server sends (its hello, which is not encrypted), then takes
/// itself out of the pipeline so that the data passes exactly as without it.
private final class SuiteReader: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    private let suite: EventLoopPromise<UInt16>
    private var seen: ByteBuffer?

    init(suite: EventLoopPromise<UInt16>) { self.suite = suite }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        seen.setOrWriteBuffer(&bytes)
        context.fireChannelRead(data)
        guard let read = seen.flatMap(Self.parseServerHello) else { return }
        switch read {
        case .success(let value): suite.succeed(value)
        case .failure(let error): suite.fail(error)
        }
        seen = nil
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        suite.fail(ChannelError.inputClosed)
        context.fireChannelInactive()
    }

    /// The suite in a TLS record holding a ServerHello (RFC 8446, 4.1.3), nil while the record is incomplete.
    private static func parseServerHello(_ record: ByteBuffer) -> Result<UInt16, BenchFailure>? {
        var record = record
        guard let contentType = record.readInteger(as: UInt8.self), record.readInteger(as: UInt16.self) != nil,
            let length = record.readInteger(as: UInt16.self)
        else { return nil }
        guard contentType == 22 else {
            return .failure(BenchFailure("the server's first TLS record is not a handshake"))
        }
        guard var body = record.readSlice(length: Int(length)) else { return nil }
        // Handshake type, its 3-byte length, legacy_version, random.
        guard body.readInteger(as: UInt8.self) == 2, body.readSlice(length: 3 + 2 + 32) != nil,
            let sessionIDLength = body.readInteger(as: UInt8.self),
            body.readSlice(length: Int(sessionIDLength)) != nil, let suite = body.readInteger(as: UInt16.self)
        else { return .failure(BenchFailure("the server's first TLS record is not a ServerHello")) }
        return .success(suite)
    }
}
