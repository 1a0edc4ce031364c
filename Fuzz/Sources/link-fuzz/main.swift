import LinkCrypto
import WireCodec

/// Fixed keys for the sealed decoders: the fuzzer cannot forge a tag, so it exercises the framing and the refusals;
/// inputs that start with a valid sealed record (seeded below) reach the frames inside.
let secret = try! SessionSecret(secret: Array("fuzz".utf8), sessionName: "fuzz")
let dialer = SecretHandshake(role: .dialer)
let acceptor = SecretHandshake(role: .acceptor)
let dialerHello = try! StreamFraming.encode(
    .hello(
        Hello(
            peerID: PeerID(1), displayName: "d", sessionName: "fuzz",
            extensions: [.authentication(publicKey: dialer.publicKey)])))
let acceptorHello = try! StreamFraming.encode(
    .hello(
        Hello(
            peerID: PeerID(2), displayName: "a", sessionName: "fuzz",
            extensions: [.authentication(publicKey: acceptor.publicKey)])))
let keys = try! acceptor.keys(
    secret: secret, localHello: acceptorHello, remoteHello: dialerHello, remoteKey: dialer.publicKey)
let peerKeys = try! dialer.keys(
    secret: secret, localHello: dialerHello, remoteHello: acceptorHello, remoteKey: acceptor.publicKey)

/// Feeds one input to the secret handshake and to the sealed-record and sealed-datagram decoders.
///
/// - The handshake: the input as the peer's public key and hello, and as its proof, never traps and never verifies.
/// - Records: forged ones never open; the input sealed by the peer opens, in two chunks, to exactly the input, and
///   with one bit flipped never opens.
/// - Datagrams: refused or opened, never a trap; a datagram is never accepted twice.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let bytes = [UInt8](input)

    // Handshake: a hostile key, hello and proof.
    if size >= 32 {
        let remoteKey = Array(bytes[0..<32])
        if let derived = try? acceptor.keys(
            secret: secret, localHello: acceptorHello, remoteHello: Array(bytes[32...]), remoteKey: remoteKey)
        {
            precondition((try? derived.verify(peerProof: Array(bytes.suffix(32)))) == nil, "a forged proof verified")
        }
    }
    precondition((try? keys.verify(peerProof: bytes)) == nil, "a forged proof verified")

    // Records: hostile bytes are refused or wait for more, never trap.
    var hostile = keys.makeRecordOpener()
    if case .some(.some(let record)) = try? hostile.open(input) {
        preconditionFailure("a forged record of \(record.consumed) bytes opened")
    }

    // Records: the input sealed by the peer opens, in two chunks, to exactly the input; its frames decode or fail.
    var sealer = peerKeys.makeRecordSealer()
    var sealed: [UInt8] = []
    try! sealer.seal(input, into: &sealed)
    var opener = keys.makeRecordOpener()
    let split = size == 0 ? 0 : Int(bytes[0]) % (sealed.count + 1)
    var pending = Array(sealed[..<split])
    var opened: [UInt8] = []
    for chunk in [sealed[..<0], sealed[split...]] {
        pending += chunk
        while let (plaintext, consumed) = try! pending.withUnsafeBytes({ try opener.open($0) }) {
            opened += plaintext
            pending.removeFirst(consumed)
        }
    }
    precondition(pending.isEmpty && opened == bytes, "sealed records did not open to their plaintext")
    var tampered = sealed
    if !tampered.isEmpty {
        tampered[tampered.count - 1] ^= 1
        var strict = keys.makeRecordOpener()
        var failed = false
        var rest = tampered[...]
        while !rest.isEmpty {
            do {
                guard let (_, consumed) = try Array(rest).withUnsafeBytes({ try strict.open($0) }) else { break }
                rest = rest.dropFirst(consumed)
            } catch {
                failed = true
                break
            }
        }
        precondition(failed, "a tampered record opened")
    }
    _ = try? opened.withUnsafeBytes { try StreamFraming.decodeFrame($0, limits: .default) }

    // Datagrams: at most once.
    var datagrams = keys.makeDatagramOpener()
    let headerLength = size == 0 ? 0 : Int(bytes[0]) % 12
    if size >= headerLength, (try? datagrams.open(input, headerLength: headerLength)) != nil {
        precondition((try? datagrams.open(input, headerLength: headerLength)) == nil, "a datagram opened twice")
    }
    return 0
}
