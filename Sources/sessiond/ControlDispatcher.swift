import BubblesAndCounter
import Foundation
import Histogram
@_spi(Diagnostics) import LanSession
import Logging
import SessionControl
import WireCodec

/// Answers control requests with the session's state and actions.
struct ControlDispatcher: Sendable {
    let session: Session
    let app: BubblesAndCounterApp
    let hub: EventHub
    let desk: StreamDesk
    /// Where the page is served, when it is (`--http`).
    let page: PageLocation
    /// What the daemon's Bluetooth runs on.
    let bluetooth: BluetoothState
    let logger: Logger

    /// The reply line (without its newline) to `request`.
    func handle(_ request: ControlRequest) async -> Data {
        do {
            switch request.command {
            case "status":
                return Self.reply(try await status())
            case "peers":
                let layout = try await app.layout()
                return Self.reply(try await session.peers().map { Self.result($0, layout: layout) })
            case "increment":
                let count = request.count ?? 1
                guard count >= 1 else { return Self.failure("count must be at least 1") }
                // Saved, then sent to every member, before the client hears "done"; a failed save sends nothing.
                let local = try await app.increment(by: UInt64(count))
                return Self.reply(IncrementResult(local: local))
            case "counter":
                return Self.reply(try await counter())
            case "bubbles":
                let board = try await app.bubbles()
                return Self.reply(
                    board.bubbles.enumerated().map { index, bubble in
                        BubbleResult(
                            view: index, holder: bubble.holder?.description, x: Double(bubble.x), y: Double(bubble.y))
                    })
            case "pickup":
                try await app.pickUp(try view(request))
                return Self.reply(DoneResult())
            case "move":
                guard let x = request.x, let y = request.y else { return Self.failure("move needs x and y") }
                try await app.move(try view(request), x: Float(x), y: Float(y))
                return Self.reply(DoneResult())
            case "drop":
                let view = try view(request)
                let bubble = try await app.bubbles().bubbles[Int(view)]
                try await app.drop(
                    view, x: Float(request.x ?? Double(bubble.x)), y: Float(request.y ?? Double(bubble.y)))
                return Self.reply(DoneResult())
            case "invitations":
                return Self.reply(
                    try await session.invitations().map {
                        InvitationResult(
                            id: $0.id, peerID: $0.peerID.description, name: $0.displayName,
                            context: Data($0.context).base64EncodedString())
                    })
            case "accept":
                guard let id = request.id else { return Self.failure("accept needs an invitation id") }
                return Self.reply(AnswerResult(answered: try await session.answer(id, accept: true)))
            case "decline":
                guard let id = request.id else { return Self.failure("decline needs an invitation id") }
                if let reason = request.reason { logger.info("declining invitation \(id): \(reason)") }
                return Self.reply(AnswerResult(answered: try await session.answer(id, accept: false)))
            case "bench":
                return try await bench(request)
            case "send":
                return try await send(request)
            case "stream":
                return try await stream(request)
            case "pair", "pairings", "devices", "unpair":
                return try await trust(request)
            case "web":
                guard let location = page.current else {
                    return Self.failure("the page is off: start sessiond with --http [ADDR:]PORT")
                }
                return Self.reply(WebResult(url: location.url, listening: location.listening))
            case "transfers":
                return Self.reply(try await session.transfers().map { Self.result($0) })
            case "cancel":
                guard let text = request.transfer else { return Self.failure("cancel needs a transfer id") }
                let transfers = try await session.transfers()
                guard let transfer = transfers.first(where: { $0.id.description == text }) else {
                    let ids = transfers.map(\.id.description)
                    return Self.failure(
                        "no transfer \(text) under way; under way: \(ids.isEmpty ? "none" : ids.joined(separator: ", "))"
                    )
                }
                try await session.cancelTransfer(transfer.id, reason: request.reason ?? "cancelled by the operator")
                return Self.reply(DoneResult())
            default:
                return Self.failure("unknown command \"\(request.command)\"")
            }
        } catch let error as SessionError {
            return Self.failure(error.message)
        } catch {
            return Self.failure("\(error)")
        }
    }

    /// The reply line (without its newline) to `request` when it can be answered at once, on the session's event
    /// loop, without waiting: an `increment` whose count saves in place (see ``BubblesAndCounterApp/incrementNow(by:)``),
    /// saved and sent to every member before this returns, as ``handle(_:)`` would. Nil for anything else, and off the
    /// loop: ``handle(_:)`` answers it.
    func handleNow(_ request: ControlRequest) -> Data? {
        guard request.command == "increment" else { return nil }
        let count = request.count ?? 1
        guard count >= 1 else { return Self.failure("count must be at least 1") }
        do {
            guard let local = try app.incrementNow(by: UInt64(count)) else { return nil }
            return Self.reply(IncrementResult(local: local))
        } catch {
            return Self.failure(error.message)
        }
    }

    private func send(_ request: ControlRequest) async throws -> Data {
        guard let encoded = request.data, let bytes = Data(base64Encoded: encoded) else {
            return Self.failure("send needs data (base64)")
        }
        let mode: SendMode
        switch request.channel ?? "reliable" {
        case "reliable": mode = .reliable
        case "unreliable": mode = .unreliable
        default: return Self.failure("channel must be reliable or unreliable")
        }
        var targets: [PeerID]?
        if let wanted = request.peer {
            targets = [try await member(named: wanted).peerID]
        }
        try await session.send(Array(bytes), to: targets, mode: mode)
        var sentTo = targets ?? []
        if targets == nil {
            sentTo = try await session.peerStates().filter { $0.value != .discovered }.keys.sorted()
        }
        return Self.reply(SendResult(bytes: bytes.count, peers: sentTo.map(\.description)))
    }

    /// The peer `wanted` names (a peer id or a display name) among the session's members; the error lists them.
    func member(named wanted: String) async throws -> PeerInfo {
        let peers = try await session.peers().filter { $0.state != .discovered }
        if let peer = peers.first(where: { $0.peerID.description == wanted.lowercased() || $0.name == wanted }) {
            return peer
        }
        let known = peers.map { "\($0.name) (\($0.peerID))" }
        throw SessionError(
            .noSuchPeer,
            "no peer \"\(wanted)\" in the session; peers: \(known.isEmpty ? "none" : known.joined(separator: ", "))")
    }

    private func view(_ request: ControlRequest) throws -> UInt8 {
        guard let view = request.view, BubbleBoard.isValid(UInt8(clamping: max(0, view))), view >= 0 else {
            throw SessionError(
                .invalidArgument, "no bubble \(request.view.map(String.init) ?? "given"); bubbles are 0, 1, 2")
        }
        return UInt8(view)
    }

    private func counter() async throws -> CounterResult {
        let counter = try await app.counter()
        let names = Dictionary(try await session.peers().map { ($0.peerID, $0.name) }, uniquingKeysWith: { a, _ in a })
        var peers: [String: CounterResult.PeerCount] = [:]
        for (id, count) in counter.counts where id != session.peerID {
            peers[id.description] = CounterResult.PeerCount(name: names[id] ?? "", count: count)
        }
        return CounterResult(local: counter[session.peerID], peers: peers, total: counter.total)
    }

    private func bench(_ request: ControlRequest) async throws -> Data {
        guard let wanted = request.peer else { return Self.failure("bench needs a peer (peer id or name)") }
        let transport = request.transport ?? LANTransport.name
        let known = await session.listeningEndpoints.map(\.transport)
        guard known.contains(transport) else {
            return Self.failure("no \(transport) transport here (this daemon runs: \(known.joined(separator: ", ")))")
        }
        let channel = request.channel ?? "reliable"
        guard channel == "reliable" || channel == "unreliable" else {
            return Self.failure("channel must be reliable or unreliable")
        }
        let count = request.count ?? 1000
        guard (1...1_000_000).contains(count) else { return Self.failure("count must be 1...1000000") }
        let peers = try await session.peers().filter { $0.state == .connected }
        guard let peer = peers.first(where: { $0.peerID.description == wanted.lowercased() || $0.name == wanted })
        else {
            return Self.failure("no connected peer \"\(wanted)\"")
        }
        let unreliable = channel == "unreliable"
        let isActiveTransport = peer.links.first?.transport == transport
        if unreliable && isActiveTransport && peer.unreliable != .udp && transport == LANTransport.name {
            return Self.failure("datagrams do not get through to \(peer.name) (\(peer.unreliable.rawValue))")
        }
        // The ping frame without payload; the payload pads it to the requested size.
        let base = try StreamFraming.frameSize(of: .ping(Ping(nonce: 1_000, timestamp: 1 << 32)))
        let payload = max(0, min(Wire.maxPingPayloadLength, (request.size ?? 3) - base))
        let size = try StreamFraming.frameSize(
            of: .ping(Ping(nonce: 1_000, timestamp: 1 << 32, payload: [UInt8](repeating: 0, count: payload))))
        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
        // The series runs on the session's event loop, each ping sent as the previous pong arrives: what is measured
        // is the path from socket to socket, not a hop between threads per round trip.
        let roundTrips = try await session.measureRoundTrips(
            to: peer.peerID, count: count, unreliable: unreliable, payloadSize: payload, transport: transport)
        for roundTrip in roundTrips {
            let (seconds, attoseconds) = roundTrip.components
            histogram.record(UInt64(max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)))
        }
        func micros(_ nanoseconds: UInt64) -> Double { (Double(nanoseconds) / 100).rounded() / 10 }
        return Self.reply(
            BenchResult(
                transport: transport, channel: channel, count: count, size: size,
                p50_us: micros(histogram.valueAtPercentile(50)), p90_us: micros(histogram.valueAtPercentile(90)),
                p99_us: micros(histogram.valueAtPercentile(99)), max_us: micros(histogram.max),
                mean_us: (histogram.mean / 100).rounded() / 10))
    }

    static func result(_ peer: PeerInfo, layout: PlayerLayout) -> PeerResult {
        PeerResult(
            peerID: peer.peerID.description, name: peer.name, state: peer.state.rawValue, transport: peer.transport,
            address: peer.address, playerIndex: peer.state == .connected ? layout.indexes[peer.peerID] : nil,
            rttMicros: peer.rttMicros,
            unreliable: peer.unreliable.rawValue, endpoints: peer.endpoints.map(\.description),
            links: peer.links.map {
                LinkResult(
                    transport: $0.transport, address: $0.address, state: $0.state.rawValue, rttMicros: $0.rttMicros,
                    encrypted: $0.encrypted, cipher: $0.cipher?.name)
            }, encrypted: peer.encrypted, cipher: peer.cipher?.name, fingerprint: peer.fingerprint,
            trust: peer.trust?.rawValue)
    }

    static func result(_ progress: TransferProgress, seconds: Double? = nil) -> TransferResult {
        var result = TransferResult(
            id: progress.id.description, peerID: progress.peer.description, name: progress.name,
            direction: progress.id.direction.rawValue, phase: "inProgress", bytes: progress.bytes,
            total: progress.total, resumedFrom: progress.resumedFrom)
        switch progress.phase {
        case .started: result.phase = "started"
        case .inProgress: result.phase = "inProgress"
        case .finished(let path, let sha256):
            result.phase = "finished"
            result.path = path
            result.sha256 = sha256
        case .cancelled(let byPeer, let reason):
            result.phase = "cancelled"
            result.reason = byPeer ? "by the peer: \(reason)" : reason
        case .failed(let reason):
            result.phase = "failed"
            result.reason = reason
        }
        if let seconds, seconds > 0 {
            result.seconds = (seconds * 1000).rounded() / 1000
            result.megabytesPerSecond = (Double(progress.bytes - progress.resumedFrom) / seconds / 1e4).rounded() / 100
        }
        return result
    }

    static func reply<Result: Codable & Sendable>(_ result: Result) -> Data {
        (try? JSONEncoder().encode(ControlReply(result: result))) ?? Data(#"{"ok":false,"error":"encoding"}"#.utf8)
    }

    static func failure(_ message: String) -> Data {
        (try? JSONEncoder().encode(ControlReply<DoneResult>(error: message))) ?? Data(#"{"ok":false}"#.utf8)
    }

    /// How an event's `time` is written: ISO 8601, UTC, milliseconds.
    static let timeStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// The JSON line of an event (without its newline), for `watch`, stamped with the time now.
    static func encode(_ event: DaemonEvent, with encoder: JSONEncoder = JSONEncoder()) -> Data? {
        var result: EventResult
        switch event {
        case .session(let event): result = Self.result(event)
        case .app(let event): result = Self.result(event)
        }
        result.time = Date().formatted(timeStyle)
        return try? encoder.encode(result)
    }

    /// What `watch` says of a session event.
    static func result(_ event: SessionEvent) -> EventResult {
        var result: EventResult
        switch event {
        case .peerState(let info):
            result = EventResult(event: "peerState")
            result.peerID = info.peerID.description
            result.name = info.name
            result.state = info.state.rawValue
            result.address = info.address
        case .peerConnected(let id, let name):
            result = EventResult(event: "peerConnected")
            result.peerID = id.description
            result.name = name
        case .peerLost(let id):
            result = EventResult(event: "peerLost")
            result.peerID = id.description
        case .linkChanged(let id, let link):
            result = EventResult(event: "linkChanged")
            result.peerID = id.description
            result.transport = link.transport
            result.address = link.address
            result.state = link.state.rawValue
        case .peerLeft(let id, let reason):
            result = EventResult(event: "peerLeft")
            result.peerID = id.description
            result.reason = reason.description
        case .declined(let id, let address, let reason):
            result = EventResult(event: "declined")
            result.peerID = id?.description
            result.address = address
            result.reason = reason.description
        case .invitation(let request):
            result = EventResult(event: "invitation")
            result.id = request.id
            result.peerID = request.peerID.description
            result.name = request.displayName
        case .resynchronised(let id, let lost):
            result = EventResult(event: "resynchronised")
            result.peerID = id.description
            result.count = lost
        case .unacknowledged(let id, let messages):
            result = EventResult(event: "unacknowledged")
            result.peerID = id.description
            result.count = messages
        case .data(let id, let bytes, let reliable):
            result = EventResult(event: "data")
            result.peerID = id.description
            let bytes = Array(bytes.readableBytesView)
            result.data = Data(bytes).base64EncodedString()
            result.text = String(validating: bytes, as: UTF8.self)
            result.count = UInt64(bytes.count)
            result.channel = reliable ? "reliable" : "unreliable"
        case .messages(let batch):
            // The daemon reads its session's messages one by one (as `data`); a batch is only counted.
            result = EventResult(event: "messages")
            result.peerID = batch.from.description
            result.count = UInt64(batch.count)
            result.channel = batch.reliable ? "reliable" : "unreliable"
        case .streamOpened(let stream):
            result = EventResult(event: "streamOpened")
            result.peerID = stream.peer.description
            result.name = stream.name
            result.id = UInt64(stream.id)
        case .transfer(let progress):
            result = EventResult(event: "transfer")
            result.peerID = progress.peer.description
            result.name = progress.name
            result.transfer = Self.result(progress)
        case .peerChanged(let id, let state):
            result = EventResult(event: "peerChanged")
            result.peerID = id.description
            result.state = state.description
        case .connectFailed(let endpoint, let reason):
            result = EventResult(event: "connectFailed")
            result.address = endpoint.description
            result.reason = reason
        case .notice(let notice):
            result = EventResult(event: "notice")
            result.reason = notice.description
        case .eventsMissed(let count):
            result = EventResult(event: "eventsMissed")
            result.count = UInt64(count)
        case .pairingRequested(let request):
            result = EventResult(event: "pairingRequested")
            result.peerID = request.peerID.description
            result.name = request.displayName
            result.fingerprint = request.fingerprint
            result.code = request.code
        case .paired(let device):
            result = EventResult(event: "paired")
            result.peerID = device.peerID.description
            result.name = device.name
            result.fingerprint = device.fingerprint
        case .pairingEnded(let id, let reason):
            result = EventResult(event: "pairingEnded")
            result.peerID = id.description
            result.reason = reason
        case .introduced(let device):
            result = EventResult(event: "introduced")
            result.peerID = device.peerID.description
            result.name = device.name
            result.fingerprint = device.fingerprint
            result.holder = device.introducedBy?.description
        case .unpaired(let id, let by):
            result = EventResult(event: "unpaired")
            result.peerID = id.description
            result.holder = by.description
        }
        return result
    }

    /// What `watch` says of an event of the apps.
    static func result(_ event: BubblesAndCounterEvent) -> EventResult {
        var result: EventResult
        switch event {
        case .counter(let id, let count, let total):
            result = EventResult(event: "counter")
            result.peerID = id.description
            result.count = count
            result.total = total
        case .pickUp(let view, let id):
            result = EventResult(event: "pickUp")
            result.view = Int(view)
            result.peerID = id.description
        case .holder(let view, let holder):
            result = EventResult(event: "holder")
            result.view = Int(view)
            result.holder = holder?.description
        case .move(let view, let x, let y, let id):
            result = EventResult(event: "move")
            result.view = Int(view)
            result.x = Double(x)
            result.y = Double(y)
            result.peerID = id.description
        case .drop(let view, let x, let y, let id):
            result = EventResult(event: "drop")
            result.view = Int(view)
            result.x = Double(x)
            result.y = Double(y)
            result.peerID = id.description
        case .layout(let layout):
            result = EventResult(event: "layout")
            result.layout = Dictionary(uniqueKeysWithValues: layout.map { ($0.key.description, $0.value) })
        case .countClaimedAbove(let id, let claimed, let local):
            result = EventResult(event: "countClaimedAbove")
            result.peerID = id.description
            result.count = claimed
            result.total = local
        case .eventsMissed(let count):
            result = EventResult(event: "eventsMissed")
            result.count = UInt64(count)
        }
        return result
    }
}
