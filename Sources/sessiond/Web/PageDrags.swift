import LanSession
import Synchronization

/// What one page drags, as its daemon sees it.
///
/// - The bubbles it asked to pick up and has no answer for yet. A move the page sends meanwhile waits here (the latest
///   only) and is carried out as soon as the pick-up is granted, without waiting for the page to hear of the grant
///   and send it again; it is forgotten when another device gets the bubble, or when the page drops it.
/// - The last move it sent per bubble, whose echo from the app is not sent back to it (it is already there); any other
///   change of the bubble (another device's move, a drop) still is.
final class PageDrags: Sendable {
    private struct State {
        /// Bubble → the move waiting for the pick-up's answer, if any.
        var asked: [UInt8: PageOperation?] = [:]
        var lastSent: [UInt8: (Float, Float)] = [:]
    }

    private let state = Mutex(State())

    /// The page asked to pick up `operation.view`.
    func askedFor(_ operation: PageOperation) {
        guard let view = Self.view(operation) else { return }
        state.withLock { $0.asked[view] = .some(nil) }
    }

    /// A move of the page: true when it waits for its pick-up's answer (kept, nothing to do now); otherwise it is
    /// recorded as sent and goes to the app.
    func holdsBack(_ move: PageOperation) -> Bool {
        guard let view = Self.view(move), let x = move.x, let y = move.y else { return false }
        return state.withLock { state in
            if state.asked[view] != nil {
                state.asked[view] = .some(move)
                return true
            }
            state.lastSent[view] = (Float(x), Float(y))
            return false
        }
    }

    /// The page dropped `operation.view`, or its pick-up was refused at once: nothing waits for it any more.
    func forget(_ operation: PageOperation) {
        guard let view = Self.view(operation) else { return }
        _ = state.withLock { $0.asked.removeValue(forKey: view) }
    }

    /// Who holds `view` now (nil: free, which answers nothing: a pick-up still waits). Returns the move to carry out
    /// now: the one that waited for this page's pick-up, when it was granted.
    func holder(of view: UInt8, isThisDevice: Bool?) -> PageOperation? {
        guard let isThisDevice else { return nil }
        return state.withLock { state in
            guard let waiting = state.asked.removeValue(forKey: view) else { return nil }
            guard isThisDevice, let move = waiting, let x = move.x, let y = move.y else { return nil }
            state.lastSent[view] = (Float(x), Float(y))
            return move
        }
    }

    /// Whether a move of the app is this page's own, just carried out.
    func isEcho(_ view: UInt8, _ x: Float, _ y: Float) -> Bool {
        state.withLock { state in
            guard let mine = state.lastSent[view], mine == (x, y) else { return false }
            state.lastSent[view] = nil
            return true
        }
    }

    private static func view(_ operation: PageOperation) -> UInt8? {
        guard let view = operation.view, (0...255).contains(view) else { return nil }
        return UInt8(view)
    }
}
