import WireCodec

/// The golden vectors of `docs/wire-format.md`: one framed message of every kind, and one datagram.
enum GoldenVectors {
    static let alice = PeerID(0x0123_4567_89AB_CDEF)
    static let bob = PeerID(0xFEDC_BA98_7654_3210)
    /// alice introduces bob: keys `00`…`1f` and `20`…`3f`, version 2, time 1700000000000, signature `40`…`7f`.
    static let statement = TrustStatement(
        verb: .introduce, subjectKey: Array(0..<32), subjectSigningKey: Array(32..<64), subjectName: "bob", version: 2,
        time: 1_700_000_000_000, issuer: alice, signature: Array(64..<128))
    static let trustFrame =
        "96 01 0c 01 01 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10 11 12 13 14 15 16 17 18 19 1a 1b 1c 1d 1e 1f 20 21 22 23 24 25 26 27 28 29 2a 2b 2c 2d 2e 2f 30 31 32 33 34 35 36 37 38 39 3a 3b 3c 3d 3e 3f 03 62 6f 62 02 80 d0 95 ff bc 31 ef cd ab 89 67 45 23 01 40 41 42 43 44 45 46 47 48 49 4a 4b 4c 4d 4e 4f 50 51 52 53 54 55 56 57 58 59 5a 5b 5c 5d 5e 5f 60 61 62 63 64 65 66 67 68 69 6a 6b 6c 6d 6e 6f 70 71 72 73 74 75 76 77 78 79 7a 7b 7c 7d 7e 7f"

    /// Name as in the spec's table, the message, and its stream frame in hex: every kind of the session's own. The
    /// original apps' kinds are BubblesAndCounter's, and tested there.
    static let frames: [(name: String, message: Message, hex: String)] = [
        (
            "hello",
            .hello(
                Hello(
                    peerID: alice, incarnation: 0x0000_0000_0000_0001, capabilities: [.datagrams, .resume],
                    datagramPort: 47_000, displayName: "alice", sessionName: "default")),
            "25 01 03 ef cd ab 89 67 45 23 01 01 00 00 00 00 00 00 00 03 98 ef 02 05 61 6c 69 63 65 07 64 65 66 61 75 6c 74 00"
        ),
        (
            "hello+listenPort",
            .hello(
                Hello(
                    peerID: alice, incarnation: 0x0000_0000_0000_0001, capabilities: [.datagrams, .resume],
                    datagramPort: 47_000, displayName: "alice", sessionName: "default",
                    extensions: [.listenPort(47_000)])),
            "29 01 03 ef cd ab 89 67 45 23 01 01 00 00 00 00 00 00 00 03 98 ef 02 05 61 6c 69 63 65 07 64 65 66 61 75 6c 74 01 02 02 98 b7"
        ),
        (
            "hello+ciphers",
            .hello(
                Hello(
                    peerID: alice, incarnation: 0x0000_0000_0000_0001,
                    capabilities: [.datagrams, .resume, .encryption], datagramPort: 47_000, displayName: "alice",
                    sessionName: "default", extensions: [.listenPort(47_000), .ciphers([2, 1])])),
            "2d 01 03 ef cd ab 89 67 45 23 01 01 00 00 00 00 00 00 00 07 98 ef 02 05 61 6c 69 63 65 07 64 65 66 61 75 6c 74 02 02 02 98 b7 03 02 02 01"
        ),
        (
            "hello+extension",
            .hello(
                Hello(
                    peerID: bob, incarnation: 0xA0A0_A0A0_A0A0_A0A0,
                    capabilities: [.datagrams, .resume, .encryption], displayName: "bob", sessionName: "default",
                    extensions: [HelloExtension(type: 1, value: [0xA1, 0xB2, 0xC3])])),
            "26 01 03 10 32 54 76 98 ba dc fe a0 a0 a0 a0 a0 a0 a0 a0 07 00 03 62 6f 62 07 64 65 66 61 75 6c 74 01 01 03 a1 b2 c3"
        ),
        (
            "accept", .accept(Accept(linkToken: 0x1122_3344_5566_7788)),
            "09 02 88 77 66 55 44 33 22 11"
        ),
        ("decline", .decline(.full), "02 03 02"),
        (
            "invitation", .invitation(Invitation(context: Array("cafe".utf8), timeoutMilliseconds: 30_000)),
            "09 04 04 63 61 66 65 b0 ea 01"
        ),
        ("ping", .ping(Ping(nonce: 7, timestamp: 1_000_000)), "06 05 07 c0 84 3d 00"),
        ("pong", .pong(Ping(nonce: 7, timestamp: 1_000_000, payload: [0xEE, 0xEE])), "08 06 07 c0 84 3d 02 ee ee"),
        ("bye", .bye(.leaving), "02 07 01"),
        ("ack", .ack(sequence: 300), "03 08 ac 02"),
        ("resume", .resume(Resume(received: 300, nextSequence: 42)), "04 09 ac 02 2a"),
        (
            "members",
            .members([
                Member(
                    peerID: alice, displayName: "alice",
                    endpoints: [MemberEndpoint(transport: "lan", host: "10.77.0.1", port: 47_000)]),
                Member(peerID: bob, displayName: "bob", endpoints: []),
            ]),
            "2f 0a 02 ef cd ab 89 67 45 23 01 05 61 6c 69 63 65 01 03 6c 61 6e 09 31 30 2e 37 37 2e 30 2e 31 98 ef 02 10 32 54 76 98 ba dc fe 03 62 6f 62 00"
        ),
        ("noise", .noise([0xE0, 0xE1, 0xE2]), "05 0b 03 e0 e1 e2"),
        ("pairing", .pairing(.confirm), "02 0d 02"),
        ("trust", .trust([GoldenVectors.statement]), GoldenVectors.trustFrame),
        ("data", .data(Array("hi".utf8)), "04 30 02 68 69"),
        ("appMessage", .appMessage(AppMessage(app: 7, bytes: Array("hi".utf8))), "05 35 07 02 68 69"),
        ("durableData", .durableData(DurableData(id: 300, bytes: Array("hi".utf8))), "06 36 ac 02 02 68 69"),
        (
            "streamOpen",
            .streamOpen(StreamOpen(id: 1, kind: .resource, name: "a.txt", size: 300, resumeKey: Array(0..<16))),
            "1b 31 01 01 05 61 2e 74 78 74 ac 02 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f"
        ),
        (
            "streamOpen+bytes", .streamOpen(StreamOpen(id: 2, kind: .bytes, name: "chat")),
            "19 31 02 00 04 63 68 61 74 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
        ),
        (
            "streamChunk", .streamChunk(StreamChunk(id: 1, offset: 300, bytes: Array("abc".utf8))),
            "08 32 01 ac 02 03 61 62 63"
        ),
        ("streamCredit", .streamCredit(StreamCredit(id: 1, received: 300, limit: 262_444)), "07 33 01 ac 02 ac 82 10"),
        (
            "streamEnd", .streamEnd(StreamEnd(id: 1, fromOpener: true, status: .finished, digest: Array(0xA0...0xBF))),
            "26 34 01 00 00 20 a0 a1 a2 a3 a4 a5 a6 a7 a8 a9 aa ab ac ad ae af b0 b1 b2 b3 b4 b5 b6 b7 b8 b9 ba bb bc bd be bf 00"
        ),
        (
            "streamEnd+cancel", .streamEnd(StreamEnd(id: 1, fromOpener: false, status: .cancelled, reason: "user")),
            "0a 34 01 01 01 00 04 75 73 65 72"
        ),
    ]

    /// The spec's datagram: two moves of bubble 0 after a header with token 0x1122334455667788 and sequence 5, as the
    /// codec carries them (kind 0x25, the body unread).
    static let datagram = Datagram(
        header: DatagramHeader(linkToken: 0x1122_3344_5566_7788, sequence: 5),
        messages: [
            .application(ApplicationMessage(kind: 0x25, body: bytes(hex: "00 00 00 80 3f 00 00 00 40 09 00"))),
            .application(ApplicationMessage(kind: 0x25, body: bytes(hex: "00 00 00 c0 3f 00 00 20 40 0a 00"))),
        ]
    )
    static let datagramHex =
        "88 77 66 55 44 33 22 11 05 0c 25 00 00 00 80 3f 00 00 00 40 09 00 0c 25 00 00 00 c0 3f 00 00 20 40 0a 00"
}
