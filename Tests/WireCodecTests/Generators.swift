import PropertyBased
import WireCodec

/// Random valid messages of every kind, for property-based tests.
enum MessageGenerators {
    static func string<R: RandomNumberGenerator>(maxBytes: Int, using rng: inout R) -> String {
        let scalars: [Unicode.Scalar] = ["a", "Z", "0", " ", "é", "ß", "€", "中", "🖥", "\u{0}", "\u{7F}", "\u{10FFFF}"]
        var text = ""
        while true {
            let next = scalars.randomElement(using: &rng)!
            if text.utf8.count + String(next).utf8.count > maxBytes || Int.random(in: 0..<8, using: &rng) == 0 {
                return text
            }
            text.unicodeScalars.append(next)
        }
    }

    static func bytes<R: RandomNumberGenerator>(maxCount: Int, using rng: inout R) -> [UInt8] {
        (0..<Int.random(in: 0...maxCount, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    /// Integers spread over every varint length, not only the large ones a uniform draw gives.
    static func spread<R: RandomNumberGenerator>(_: UInt64.Type, using rng: inout R) -> UInt64 {
        let bits = UInt64.random(in: 0...64, using: &rng)
        return bits == 64
            ? UInt64.random(in: 0...UInt64.max, using: &rng) : UInt64.random(in: 0...((1 << bits) - 1), using: &rng)
    }

    static func coordinate<R: RandomNumberGenerator>(using rng: inout R) -> Float {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: Float.random(in: -10_000...10_000, using: &rng)
        case 1:
            [0, -0.0, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude].randomElement(
                using: &rng)!
        default:
            // Any finite bit pattern.
            Float(bitPattern: UInt32.random(in: 0...UInt32.max, using: &rng) & 0xBF7F_FFFF)
        }
    }

    static func message<R: RandomNumberGenerator>(using rng: inout R) -> Message {
        let peer = { (rng: inout R) in PeerID(UInt64.random(in: 0...UInt64.max, using: &rng)) }
        switch MessageKind.allKinds.randomElement(using: &rng)! {
        case .hello:
            let extensions = (0..<Int.random(in: 0...Wire.maxHelloExtensions, using: &rng)).map { _ in
                HelloExtension(
                    type: UInt16.random(in: 0...UInt16.max, using: &rng),
                    value: bytes(maxCount: Wire.maxHelloExtensionLength, using: &rng))
            }
            return .hello(
                Hello(
                    protocolVersion: UInt32.random(in: 1...UInt32.max, using: &rng), peerID: peer(&rng),
                    incarnation: UInt64.random(in: 0...UInt64.max, using: &rng),
                    capabilities: Capabilities(rawValue: UInt32(truncatingIfNeeded: spread(UInt64.self, using: &rng))),
                    datagramPort: UInt16.random(in: 0...UInt16.max, using: &rng),
                    displayName: string(maxBytes: Wire.maxNameLength, using: &rng),
                    sessionName: string(maxBytes: Wire.maxNameLength, using: &rng), extensions: extensions))
        case .accept:
            return .accept(Accept(linkToken: UInt64.random(in: 0...UInt64.max, using: &rng)))
        case .resume:
            return .resume(
                Resume(received: spread(UInt64.self, using: &rng), nextSequence: spread(UInt64.self, using: &rng)))
        case .members:
            // Up to 16 members keep the generated frames within the default frame limit.
            return .members(
                (0..<Int.random(in: 0...16, using: &rng)).map { _ in
                    Member(
                        peerID: peer(&rng), displayName: string(maxBytes: Wire.maxNameLength, using: &rng),
                        endpoints: (0..<Int.random(in: 0...Wire.maxMemberEndpoints, using: &rng)).map { _ in
                            MemberEndpoint(
                                transport: string(maxBytes: Wire.maxTransportNameLength, using: &rng),
                                host: string(maxBytes: Wire.maxHostLength, using: &rng),
                                port: UInt16.random(in: 0...UInt16.max, using: &rng))
                        })
                })
        case .noise:
            return .noise(bytes(maxCount: 200, using: &rng))
        case .pairing:
            return .pairing(PairingStep(rawValue: UInt8.random(in: 0...255, using: &rng)))
        case .trust:
            return .trust(
                (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                    TrustStatement(
                        verb: .init(rawValue: UInt8.random(in: 0...255, using: &rng)),
                        subjectKey: (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) },
                        subjectSigningKey: (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) },
                        subjectName: string(maxBytes: Wire.maxNameLength, using: &rng),
                        version: spread(UInt64.self, using: &rng), time: spread(UInt64.self, using: &rng),
                        issuer: peer(&rng), signature: (0..<64).map { _ in UInt8.random(in: 0...255, using: &rng) })
                })
        case .decline: return .decline(DeclineReason(rawValue: UInt8.random(in: 0...255, using: &rng)))
        case .invitation:
            return .invitation(
                Invitation(
                    context: bytes(maxCount: Wire.maxInvitationContextLength, using: &rng),
                    timeoutMilliseconds: UInt32.random(in: 0...UInt32.max, using: &rng)))
        case .ping, .pong:
            let ping = Ping(
                nonce: UInt32(truncatingIfNeeded: spread(UInt64.self, using: &rng)),
                timestamp: spread(UInt64.self, using: &rng), payload: bytes(maxCount: 40, using: &rng))
            return Bool.random(using: &rng) ? .ping(ping) : .pong(ping)
        case .bye: return .bye(ByeReason(rawValue: UInt8.random(in: 0...255, using: &rng)))
        case .ack: return .ack(sequence: spread(UInt64.self, using: &rng))
        case .application(let kind):
            return .application(ApplicationMessage(kind: kind, body: bytes(maxCount: 64, using: &rng)))
        case .data:
            return .data(bytes(maxCount: 300, using: &rng))
        case .appMessage:
            return .appMessage(
                AppMessage(app: UInt8.random(in: 1...255, using: &rng), bytes: bytes(maxCount: 300, using: &rng)))
        case .durableData:
            return .durableData(
                DurableData(
                    id: UInt64.random(in: 1...UInt64.max, using: &rng), bytes: bytes(maxCount: 300, using: &rng)))
        case .streamOpen:
            return .streamOpen(
                StreamOpen(
                    id: UInt32(truncatingIfNeeded: spread(UInt64.self, using: &rng)),
                    kind: Bool.random(using: &rng) ? .bytes : .resource,
                    name: string(maxBytes: Wire.maxStreamNameLength, using: &rng),
                    size: spread(UInt64.self, using: &rng),
                    resumeKey: (0..<Wire.resumeKeyLength).map { _ in UInt8.random(in: 0...255, using: &rng) }))
        case .streamChunk:
            return .streamChunk(
                StreamChunk(
                    id: UInt32(truncatingIfNeeded: spread(UInt64.self, using: &rng)),
                    offset: spread(UInt64.self, using: &rng), bytes: bytes(maxCount: 300, using: &rng)))
        case .streamCredit:
            let received = spread(UInt64.self, using: &rng)
            return .streamCredit(
                StreamCredit(
                    id: UInt32(truncatingIfNeeded: spread(UInt64.self, using: &rng)), received: received,
                    limit: received &+ UInt64.random(in: 0...(UInt64.max - received), using: &rng)))
        case .streamEnd:
            return .streamEnd(
                StreamEnd(
                    id: UInt32(truncatingIfNeeded: spread(UInt64.self, using: &rng)),
                    fromOpener: Bool.random(using: &rng),
                    status: StreamStatus(rawValue: UInt8.random(in: 0...255, using: &rng)),
                    digest: Bool.random(using: &rng)
                        ? (0..<Wire.digestLength).map { _ in UInt8.random(in: 0...255, using: &rng) } : [],
                    reason: string(maxBytes: Wire.maxStreamReasonLength, using: &rng)))
        }
    }

    /// A generator of valid messages.
    static let messages = Generator<Message, Shrink.None<Message>> { rng in message(using: &rng) }

    /// A generator of short message sequences.
    static let messageSequences = Generator<[Message], Shrink.None<[Message]>> { rng in
        (0..<Int.random(in: 1...40, using: &rng)).map { _ in message(using: &rng) }
    }

    /// A generator of arbitrary bytes, for inputs that must never trap.
    static let garbage = Generator<[UInt8], Shrink.None<[UInt8]>> { rng in
        bytes(maxCount: 300, using: &rng)
    }
}
