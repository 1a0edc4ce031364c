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

    /// The reply to `command`: its result, or the message of its error reply. `push`, `watch` and `streams` are the
    /// connection's (``ControlServer``), not answered here.
    func handle(_ command: ControlCommand) async -> Result<ControlResult, ControlError> {
        do {
            return .success(try await result(of: command))
        } catch let error as ControlError {
            return .failure(error)
        } catch let error as SessionError {
            return .failure(ControlError(error.message))
        } catch {
            return .failure(ControlError("\(error)"))
        }
    }

    /// The reply to `command` when it can be answered at once, on the session's event loop, without waiting: an
    /// `increment` whose count saves in place (see ``BubblesAndCounterApp/incrementNow(by:)``), saved and sent to
    /// every member before this returns, as ``handle(_:)`` would. Nil for anything else, and off the loop:
    /// ``handle(_:)`` answers it.
    func handleNow(_ command: ControlCommand) -> Result<ControlResult, ControlError>? {
        guard case .increment(let count) = command else { return nil }
        do {
            guard let local = try app.incrementNow(by: UInt64(count)) else { return nil }
            return .success(.increment(IncrementResult(local: local)))
        } catch {
            return .failure(ControlError(error.message))
        }
    }

    private func result(of command: ControlCommand) async throws -> ControlResult {
        switch command {
        case .status: return .status(try await status())
        case .peers: return .peers(try await peers())
        case .increment(let count):
            // Saved, then sent to every member, before the client hears "done"; a failed save sends nothing.
            return .increment(IncrementResult(local: try await app.increment(by: UInt64(count))))
        case .counter: return .counter(try await counter())
        case .bubbles: return .bubbles(try await bubbles())
        case .pickUp(let view):
            try await app.pickUp(try Self.bubble(view))
            return .done
        case .move(let view, let x, let y):
            try await app.move(try Self.bubble(view), x: Float(x), y: Float(y))
            return .done
        case .drop(let view, let x, let y):
            let view = try Self.bubble(view)
            let bubble = try await app.bubbles().bubbles[Int(view)]
            try await app.drop(view, x: Float(x ?? Double(bubble.x)), y: Float(y ?? Double(bubble.y)))
            return .done
        case .invitations:
            return .invitations(
                try await session.invitations().map {
                    InvitationResult(
                        id: $0.id, peerID: $0.peerID.description, name: $0.displayName,
                        context: Data($0.context).base64EncodedString())
                })
        case .accept(let id):
            return .answer(AnswerResult(answered: try await session.answer(id, accept: true)))
        case .decline(let id, let reason):
            if let reason { logger.info("declining invitation \(id): \(reason)") }
            return .answer(AnswerResult(answered: try await session.answer(id, accept: false)))
        case .bench(let bench): return .bench(try await self.bench(bench))
        case .send(let data, let peer, let channel): return .send(try await send(data, to: peer, on: channel))
        case .stream(let path, let peer, let name): return .stream(try await stream(path, to: peer, named: name))
        case .pair(let peer, let code): return .pair(try await pair(PeerID(rawValue: peer), code: code))
        case .pairings: return .pairings(try await pairings())
        case .devices: return .devices(try await devices())
        case .unpair(let peer):
            try await session.unpair(PeerID(rawValue: peer))
            return .done
        case .web:
            guard let location = page.current else {
                throw ControlError("the page is off: start sessiond with --http [ADDR:]PORT")
            }
            return .web(WebResult(url: location.url, listening: location.listening))
        case .transfers: return .transfers(try await session.transfers().map { Self.result($0) })
        case .cancel(let text, let reason):
            let transfers = try await session.transfers()
            guard let transfer = transfers.first(where: { $0.id.description == text }) else {
                let ids = transfers.map(\.id.description)
                throw ControlError(
                    "no transfer \(text) under way; under way: \(ids.isEmpty ? "none" : ids.joined(separator: ", "))")
            }
            try await session.cancelTransfer(transfer.id, reason: reason ?? "cancelled by the operator")
            return .done
        case .push, .watch, .streams:
            throw ControlError("\(command.name) is the connection's to answer")
        }
    }

    /// `peers`: every peer, with its player index.
    func peers() async throws -> [PeerResult] {
        let layout = try await app.layout()
        return try await session.peers().map { Self.result($0, layout: layout) }
    }

    /// `bubbles`: every bubble, in view order.
    func bubbles() async throws -> [BubbleResult] {
        try await app.bubbles().bubbles.enumerated().map { index, bubble in
            BubbleResult(view: index, holder: bubble.holder?.description, x: Double(bubble.x), y: Double(bubble.y))
        }
    }

    private func send(_ bytes: Data, to peer: String?, on channel: ControlChannel) async throws -> SendResult {
        var targets: [PeerID]?
        if let peer {
            targets = [try await member(named: peer).peerID]
        }
        let mode: SendMode =
            switch channel {
            case .reliable: .reliable
            case .unreliable: .unreliable
            case .durable: .durable
            }
        try await session.send(Array(bytes), to: targets, mode: mode)
        var sentTo = targets ?? []
        if targets == nil {
            sentTo = try await session.peerStates().filter { $0.value != .discovered }.keys.sorted()
        }
        return SendResult(bytes: bytes.count, peers: sentTo.map(\.description))
    }

    /// The peer `wanted` names (a peer id or a display name) among the session's members; the error lists them.
    func member(named wanted: String) async throws -> PeerInfo {
        if let peer = try await session.member(named: wanted) { return peer }
        let known = try await session.peers().filter { $0.state != .discovered }.map { "\($0.name) (\($0.peerID))" }
        throw SessionError(
            .noSuchPeer,
            "no peer \"\(wanted)\" in the session; peers: \(known.isEmpty ? "none" : known.joined(separator: ", "))")
    }

    /// The bubble `view` names; an error reply when there is none.
    static func bubble(_ view: Int) throws(ControlError) -> UInt8 {
        guard view >= 0, BubbleBoard.isValid(UInt8(clamping: view)) else {
            throw ControlError("no bubble \(view); bubbles are 0, 1, 2")
        }
        return UInt8(view)
    }

    /// `counter`: every count.
    func counter() async throws -> CounterResult {
        let counter = try await app.counter()
        let names = Dictionary(try await session.peers().map { ($0.peerID, $0.name) }, uniquingKeysWith: { a, _ in a })
        var peers: [String: CounterResult.PeerCount] = [:]
        for (id, count) in counter.counts where id != session.peerID {
            peers[id.description] = CounterResult.PeerCount(name: names[id] ?? "", count: count)
        }
        return CounterResult(local: counter[session.peerID], peers: peers, total: counter.total)
    }

    private func bench(_ request: ControlCommand.Bench) async throws -> BenchResult {
        let wanted = request.peer
        let transport = request.transport ?? LANTransport.name
        let known = await session.listeningEndpoints.map(\.transport)
        guard known.contains(transport) else {
            throw ControlError("no \(transport) transport here (this daemon runs: \(known.joined(separator: ", ")))")
        }
        let channel = request.channel.rawValue
        let count = request.count
        let peers = try await session.peers().filter { $0.state == .connected }
        guard let peer = peers.first(where: { $0.peerID.description == wanted.lowercased() || $0.name == wanted })
        else {
            throw ControlError("no connected peer \"\(wanted)\"")
        }
        let unreliable = channel == "unreliable"
        let isActiveTransport = peer.links.first?.transport == transport
        if unreliable && isActiveTransport && peer.unreliable != .udp && transport == LANTransport.name {
            throw ControlError("datagrams do not get through to \(peer.name) (\(peer.unreliable.rawValue))")
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
        return BenchResult(
            transport: transport, channel: channel, count: count, size: size,
            p50_us: micros(histogram.valueAtPercentile(50)), p90_us: micros(histogram.valueAtPercentile(90)),
            p99_us: micros(histogram.valueAtPercentile(99)), max_us: micros(histogram.max),
            mean_us: (histogram.mean / 100).rounded() / 10)
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
}
