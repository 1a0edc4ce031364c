import BubblesAndCounter
import LanSession

/// Which of the apps' events a GATT face notifies, and as what (docs/wire-format.md 4.2): moves, with the face's own
/// numbering of them; a bubble taken or released, at its position; each peer's new total. A plain value: one per face.
public struct GATTNotifications: Sendable {
    /// The sequence of the last move notified.
    public private(set) var moveSequence: UInt16 = 0

    /// Creates the numbering of a face that has notified nothing yet.
    public init() {}

    /// What `event` notifies, if anything; `position` gives a bubble's position when its holder changes (nil: the
    /// event is not notified).
    public mutating func notification(
        for event: BubblesAndCounterEvent, position: (UInt8) async -> (x: Float, y: Float)?
    ) async -> GATTEvent? {
        switch event {
        case .move(let view, let x, let y, _):
            moveSequence &+= 1
            return .move(view: view, x: x, y: y, sequence: moveSequence)
        case .drop(let view, let x, let y, _):
            return .bubble(view: view, holder: nil, x: x, y: y)
        case .holder(let view, let holder):
            guard let (x, y) = await position(view) else { return nil }
            return .bubble(view: view, holder: holder, x: x, y: y)
        case .counter(let peer, let count, _):
            return .count(peer: peer, count: count)
        case .pickUp, .layout, .countClaimedAbove, .eventsMissed:
            return nil
        }
    }
}

extension GATTCommand {
    /// Carries the command out on `app` as if this device's user had.
    ///
    /// - Throws: what the app throws: a bubble that does not exist or is not held by this device, a session that
    ///   stopped.
    public func perform(on app: BubblesAndCounterApp) async throws(SessionError) {
        switch self {
        case .pickUp(let view): try await app.pickUp(view)
        case .move(let view, let x, let y): try await app.move(view, x: x, y: y)
        case .drop(let view, let x, let y): try await app.drop(view, x: x, y: y)
        case .increment(let count): _ = try await app.increment(by: count)
        }
    }
}
