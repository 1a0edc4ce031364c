import BubblesAndCounter
import Foundation
import LanSession
import SessionControl

/// What `watch` says of the daemon's events.
extension ControlDispatcher {
    /// How an event's `time` is written: ISO 8601, UTC, milliseconds.
    static let timeStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    /// The JSON line of an event (without its newline), for `watch`, with its number `seq` when it has one, stamped
    /// with the time now.
    static func encode(_ event: DaemonEvent, seq: UInt64? = nil, with encoder: JSONEncoder = JSONEncoder()) -> Data? {
        encode(event.control, seq: seq, with: encoder)
    }

    /// The JSON line of an event of `watch` (without its newline), with its number `seq` when it has one, stamped
    /// with `time`, when the daemon saw it.
    static func encode(
        _ event: ControlEvent, seq: UInt64?, at time: Date = Date(), with encoder: JSONEncoder = JSONEncoder()
    ) -> Data? {
        var line = event.line
        line.seq = seq
        line.time = time.formatted(timeStyle)
        return try? encoder.encode(line)
    }
}

extension DaemonEvent {
    /// The event as `watch` shows it.
    var control: ControlEvent {
        switch self {
        case .session(let event): Self.control(event)
        case .app(let event): Self.control(event)
        }
    }

    /// What `watch` says of a session event.
    static func control(_ event: SessionEvent) -> ControlEvent {
        switch event {
        case .peerState(let info):
            .peerState(
                peerID: info.peerID.description, name: info.name, state: info.state.rawValue, address: info.address)
        case .peerConnected(let id, let name): .peerConnected(peerID: id.description, name: name)
        case .peerLost(let id): .peerLost(peerID: id.description)
        case .linkChanged(let id, let link):
            .linkChanged(
                peerID: id.description, transport: link.transport, address: link.address, state: link.state.rawValue)
        case .peerLeft(let id, let reason): .peerLeft(peerID: id.description, reason: reason.description)
        case .declined(let id, let address, let reason):
            .declined(peerID: id?.description, address: address, reason: reason.description)
        case .invitation(let request):
            .invitation(id: request.id, peerID: request.peerID.description, name: request.displayName)
        case .resynchronised(let id, let lost): .resynchronised(peerID: id.description, count: lost)
        case .unacknowledged(let id, let messages): .unacknowledged(peerID: id.description, count: messages)
        case .data(let id, let bytes, let reliable):
            .data(
                peerID: id.description, data: Data(bytes.readableBytesView),
                channel: reliable ? .reliable : .unreliable)
        case .messages(let batch):
            // The daemon reads its session's messages one by one (as `data`); a batch is only counted.
            .messages(
                peerID: batch.from.description, count: UInt64(batch.count),
                channel: batch.reliable ? .reliable : .unreliable)
        case .streamOpened(let stream):
            .streamOpened(peerID: stream.peer.description, name: stream.name, id: UInt64(stream.id))
        case .transfer(let progress): .transfer(ControlDispatcher.result(progress))
        case .peerChanged(let id, let state): .peerChanged(peerID: id.description, state: state.description)
        case .connectFailed(let endpoint, let reason): .connectFailed(address: endpoint.description, reason: reason)
        case .notice(let notice): .notice(notice.description)
        case .eventsMissed(let count): .eventsMissed(count: UInt64(count))
        case .pairingRequested(let request):
            .pairingRequested(
                peerID: request.peerID.description, name: request.displayName, fingerprint: request.fingerprint,
                code: request.code)
        case .paired(let device):
            .paired(peerID: device.peerID.description, name: device.name, fingerprint: device.fingerprint)
        case .pairingEnded(let id, let reason): .pairingEnded(peerID: id.description, reason: reason)
        case .introduced(let device):
            .introduced(
                peerID: device.peerID.description, name: device.name, fingerprint: device.fingerprint,
                by: device.introducedBy?.description)
        case .unpaired(let id, let by): .unpaired(peerID: id.description, by: by.description)
        }
    }

    /// What `watch` says of an event of the apps.
    static func control(_ event: BubblesAndCounterEvent) -> ControlEvent {
        switch event {
        case .counter(let id, let count, let total): .counter(peerID: id.description, count: count, total: total)
        case .pickUp(let view, let id): .pickUp(view: Int(view), peerID: id.description)
        case .holder(let view, let holder): .holder(view: Int(view), holder: holder?.description)
        case .move(let view, let x, let y, let id):
            .move(view: Int(view), x: Double(x), y: Double(y), peerID: id.description)
        case .drop(let view, let x, let y, let id):
            .drop(view: Int(view), x: Double(x), y: Double(y), peerID: id.description)
        case .layout(let layout):
            .layout(Dictionary(uniqueKeysWithValues: layout.map { ($0.key.description, $0.value) }))
        case .countClaimedAbove(let id, let claimed, let local):
            .countClaimedAbove(peerID: id.description, count: claimed, total: local)
        case .eventsMissed(let count): .eventsMissed(count: UInt64(count))
        }
    }
}
