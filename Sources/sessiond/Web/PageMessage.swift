import SessionControl

/// What the page's WebSocket carries from the daemon: one JSON object per text frame, told apart by `type`
/// (docs/control-protocol.md, "The page").
enum PageMessage: Encodable, Sendable {
    /// Everything the page shows, first on every connection.
    case snapshot(PageSnapshot)
    /// One bubble's whole state after any change.
    case bubble(BubbleResult)
    /// The whole counter.
    case counter(CounterResult)
    /// Every peer, on any change.
    case peers([PeerResult])
    /// Pairings under way.
    case pairings([PairingResult])
    /// Player index per peer.
    case layout([PageLayoutEntry])
    /// The round trips of every link now, for the latency graph.
    case rtt(at: Int64, samples: [PageRTTSample])
    /// An operation of the page was refused.
    case error(String)

    private enum Key: String, CodingKey {
        case type, peers, pairings, layout, at, samples, message
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .snapshot(let snapshot):
            try snapshot.encode(to: encoder)
        case .bubble(let bubble):
            try Typed(type: "bubble", body: bubble).encode(to: encoder)
        case .counter(let counter):
            try Typed(type: "counter", body: counter).encode(to: encoder)
        case .peers(let peers):
            var container = encoder.container(keyedBy: Key.self)
            try container.encode("peers", forKey: .type)
            try container.encode(peers, forKey: .peers)
        case .pairings(let pairings):
            var container = encoder.container(keyedBy: Key.self)
            try container.encode("pairings", forKey: .type)
            try container.encode(pairings, forKey: .pairings)
        case .layout(let layout):
            var container = encoder.container(keyedBy: Key.self)
            try container.encode("layout", forKey: .type)
            try container.encode(layout, forKey: .layout)
        case .rtt(let at, let samples):
            var container = encoder.container(keyedBy: Key.self)
            try container.encode("rtt", forKey: .type)
            try container.encode(at, forKey: .at)
            try container.encode(samples, forKey: .samples)
        case .error(let message):
            var container = encoder.container(keyedBy: Key.self)
            try container.encode("error", forKey: .type)
            try container.encode(message, forKey: .message)
        }
    }

    /// A body's keys beside `type`.
    private struct Typed<Body: Encodable>: Encodable {
        let type: String
        let body: Body

        private enum Key: String, CodingKey { case type }

        func encode(to encoder: any Encoder) throws {
            try body.encode(to: encoder)
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(type, forKey: .type)
        }
    }
}

/// The first message of a connection.
struct PageSnapshot: Encodable, Sendable {
    let type = "snapshot"
    var this: PageSelf
    var layout: [PageLayoutEntry]
    var bubbles: [BubbleResult]
    var counter: CounterResult
    var peers: [PeerResult]
    var pairings: [PairingResult]

    private enum CodingKeys: String, CodingKey {
        case type, this = "self", layout, bubbles, counter, peers, pairings
    }
}

/// This device, as the page shows it.
struct PageSelf: Codable, Sendable {
    var peerID: String
    var name: String
    var fingerprint: String
    var admission: String
}

/// A peer's player index.
struct PageLayoutEntry: Codable, Sendable {
    var peerID: String
    var playerIndex: Int
}

/// One link's round trip.
struct PageRTTSample: Codable, Sendable, Equatable {
    var peerID: String
    var transport: String
    var rttMicros: Int
}

/// What the page asks of the daemon: `{"op": …}`.
struct PageOperation: Decodable, Sendable {
    var op: String
    var view: Int?
    var x: Double?
    var y: Double?
    var peer: String?
    var code: String?
}
