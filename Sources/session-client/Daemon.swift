import Foundation
import SessionControl

#if canImport(Glibc)
    import Glibc
#endif

/// Why a command failed, in one line, and the exit status it ends with.
struct ClientError: Error {
    /// What kind of failure it is.
    enum Kind {
        /// The daemon could not be reached.
        case unreachable
        /// The daemon answered with an error reply.
        case refused
        /// The connection broke, or the reply made no sense.
        case broken
        /// The arguments were wrong.
        case usage
    }

    var kind: Kind
    var message: String

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The failure of a call to the daemon: unreachable, refused, or else broken.
    init(_ failure: ControlClient.Failure) {
        let kind: Kind = failure.unreachable ? .unreachable : failure.refused ? .refused : .broken
        self.init(kind, failure.description)
    }

    /// 2 for bad arguments, 1 otherwise.
    var exitStatus: Int32 { kind == .usage ? 2 : 1 }
}

/// A successful reply line, with its `result` kept as the daemon sent it.
struct Reply {
    /// The whole reply line.
    var line: Data

    /// The `result` member's JSON text, as it was on the wire (`null` when absent).
    var rawResult: String {
        let bytes = [UInt8](line)
        if let span = RawJSON.member("result", in: bytes) {
            return String(decoding: span, as: UTF8.self)
        }
        return "null"
    }

    /// Decodes the `result` member.
    func decode<Result: Decodable>(_ type: Result.Type) throws(ClientError) -> Result {
        do {
            return try JSONDecoder().decode(Body<Result>.self, from: line).result
        } catch {
            throw ClientError(.broken, "unexpected reply from sessiond: \(Self.describe(error))")
        }
    }

    /// A reply's body when it succeeded.
    private struct Body<Result: Decodable>: Decodable {
        var result: Result
    }

    /// A decoding error in a few words, with the path of the field at fault.
    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return String(describing: error) }
        let context: DecodingError.Context
        switch error {
        case .typeMismatch(_, let value), .valueNotFound(_, let value), .keyNotFound(_, let value),
            .dataCorrupted(let value):
            context = value
        @unknown default:
            return String(describing: error)
        }
        let path = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
    }
}

/// A connection to the local `sessiond` that turns replies into results and failures into `ClientError`s.
final class Daemon {
    /// The socket path in use.
    let path: String
    private let client: ControlClient
    private var hasReadTimeout = false

    /// Connects to the daemon's socket at `path`.
    init(path: String) throws(ClientError) {
        self.path = path
        do {
            client = try ControlClient(path: path)
        } catch {
            let text = error.description.contains(path) ? error.description : "\(error.description) (socket \(path))"
            throw ClientError(error.unreachable ? .unreachable : .broken, text)
        }
    }

    /// Sends `request` and waits for its reply; an error reply throws with the daemon's message.
    func call(_ request: ControlCommand) throws(ClientError) -> Reply {
        clearReadTimeout()
        do {
            return Reply(line: try client.reply(to: request))
        } catch {
            throw ClientError(error)
        }
    }

    /// Sends one request line without waiting.
    func send(_ request: ControlCommand) throws(ClientError) {
        do {
            try client.send(request)
        } catch {
            throw ClientError(.broken, error.description)
        }
    }

    /// Reads the next line; nil when `deadline` (in `Monotonic.seconds()`) passed before one arrived.
    func readLine(deadline: Double?) throws(ClientError) -> Data? {
        if let deadline {
            let remaining = deadline - Monotonic.seconds()
            if remaining <= 0 { return nil }
            client.setReadTimeout(seconds: max(remaining, 0.001))
            hasReadTimeout = true
        } else {
            clearReadTimeout()
        }
        do {
            return try client.readLine()
        } catch {
            // The client reports a read timeout like a closed connection: tell them apart by the clock.
            if let deadline, Monotonic.seconds() >= deadline - 0.02 { return nil }
            throw ClientError(.broken, error.description)
        }
    }

    /// Reads without a deadline again.
    private func clearReadTimeout() {
        guard hasReadTimeout else { return }
        client.setReadTimeout(seconds: 0)
        hasReadTimeout = false
    }

    /// Checks a reply line: the reply when `ok`, the daemon's message as an error otherwise.
    func reply(from line: Data) throws(ClientError) -> Reply {
        do {
            return Reply(line: try ControlClient.checked(line))
        } catch {
            throw ClientError(error)
        }
    }
}

/// Seconds on the monotonic clock, for deadlines.
enum Monotonic {
    /// Now, in seconds since an arbitrary start.
    static func seconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1_000_000_000
    }
}
