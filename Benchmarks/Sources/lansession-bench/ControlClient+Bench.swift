import Foundation
import SessionControl

#if canImport(Glibc)
    import Glibc
#endif

extension ControlClient {
    /// Connects to the control socket at `path`, trying again every 10 ms for up to `seconds` while it is not there
    /// yet (a daemon that is starting).
    static func connect(path: String, within seconds: Double) throws -> ControlClient {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let failure: ControlClient.Failure
            do {
                return try ControlClient(path: path)
            } catch {
                failure = error
            }
            guard failure.unreachable, Date() < deadline else { throw failure }
            usleep(10_000)
        }
    }

    /// The next event of a watching connection (after `watch`); lines that are not events (replies) are skipped.
    func nextEvent() throws -> ControlEvent {
        while true {
            let line = try readLine()
            if let event = try? JSONDecoder().decode(ControlEvent.self, from: line) { return event }
        }
    }

    /// Makes the connection a watcher: sends `watch` and reads its reply.
    func startWatching() throws {
        let _: DoneOrEmpty = try call(.watch(), as: DoneOrEmpty.self)
    }

    /// The reply of `watch`: its run and last number, not read here.
    private struct DoneOrEmpty: Decodable {}
}
