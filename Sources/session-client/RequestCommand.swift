import ArgumentParser
import SessionControl

/// A command that sends one request and prints its result: as JSON with `--json`, as text otherwise.
protocol RequestCommand: ParsableCommand {
    /// The shape of the request's result.
    associatedtype Result: Decodable

    /// The shared options.
    var global: GlobalOptions { get }

    /// The request to send.
    func request() -> ControlCommand

    /// Checks what the request names (an invitation, a peer) before it is sent; throws with the valid ones.
    func prepare(_ daemon: Daemon) throws(ClientError)

    /// Prints the result for people; `daemon` is still connected for follow-up requests.
    func printText(_ result: Result, daemon: Daemon) throws(ClientError)
}

extension RequestCommand {
    func prepare(_ daemon: Daemon) throws(ClientError) {}

    func run() throws {
        let daemon = try global.connect()
        try prepare(daemon)
        let reply = try daemon.call(request())
        if global.json {
            Output.line(reply.rawResult)
        } else {
            try printText(reply.decode(Result.self), daemon: daemon)
        }
    }
}
