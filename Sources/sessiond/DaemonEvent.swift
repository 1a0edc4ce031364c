import BubblesAndCounter
import LanSession

/// What `watch` shows: the session's events and those of the original apps it carries.
enum DaemonEvent: Sendable {
    case session(SessionEvent)
    case app(BubblesAndCounterEvent)
}
