import Crypto
import LinkCrypto
import WireCodec

/// Fixed keys for the sealed decoders: the fuzzer cannot forge a tag, so it exercises the framing and the refusals;
/// inputs that start with a valid sealed record (seeded below) reach the frames inside.
let initiatorKey = Curve25519.KeyAgreement.PrivateKey()
let responderKey = Curve25519.KeyAgreement.PrivateKey()
let prologue = Array("fuzz".utf8)
/// One complete handshake, for the keys of both sides.
let (keys, peerKeys, firstMessage, secondMessage): (LinkKeys, LinkKeys, [UInt8], [UInt8]) = {
    var initiator = NoiseHandshake(role: .initiator, staticKey: initiatorKey, prologue: prologue, psk: nil)
    var responder = NoiseHandshake(role: .responder, staticKey: responderKey, prologue: prologue, psk: nil)
    let first = try! initiator.writeMessage(payload: [])
    _ = try! responder.readMessage(first)
    let second = try! responder.writeMessage(payload: [])
    _ = try! initiator.readMessage(second)
    _ = try! responder.readMessage(try! initiator.writeMessage(payload: []))
    return (try! responder.split(), try! initiator.split(), first, second)
}()

/// Feeds one input to the Noise handshake, the handshake payload's decoder, and the sealed-record and
/// sealed-datagram decoders.
///
/// - The handshake: the input as message 1 to a responder (which then answers), and as message 2 or 3 after a real
///   message 1 or 2, never traps; a forged message 2 or 3 never completes a handshake.
/// - The payload: decoded or refused with a typed error.
/// - Records: forged ones never open; the input sealed by the peer opens, in two chunks, to exactly the input, and
///   with one bit flipped never opens.
/// - Datagrams: refused or opened, never a trap; a datagram is never accepted twice.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let bytes = [UInt8](input)

    // Handshake: hostile messages at every step.
    var responder = NoiseHandshake(role: .responder, staticKey: responderKey, prologue: prologue, psk: nil)
    if (try? responder.readMessage(bytes)) != nil {
        _ = try? responder.writeMessage(payload: bytes)
        precondition((try? responder.readMessage(bytes)) == nil || !responder.isComplete, "a forged message 3")
    }
    var initiator = NoiseHandshake(role: .initiator, staticKey: initiatorKey, prologue: prologue, psk: nil)
    _ = try? initiator.writeMessage(payload: [])
    precondition((try? initiator.readMessage(bytes)) == nil, "a forged message 2 was read")
    var late = NoiseHandshake(role: .responder, staticKey: responderKey, prologue: prologue, psk: nil)
    _ = try? late.readMessage(firstMessage)
    _ = try? late.writeMessage(payload: [])
    precondition((try? late.readMessage(bytes)) == nil, "a forged message 3 completed a handshake")
    _ = try? HandshakePayload.decode(bytes)

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
