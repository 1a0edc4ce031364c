import ArgumentParser
import Foundation
import SessionControl
import WireCodec

/// `send`: one application message to a peer or to every member.
struct Send: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sends a message (text, a small file, or standard input) to a peer or to every member.",
        discussion: """
            Reliable by default: exactly once and in order, across reconnects. At most \(Wire.maxDataLength) bytes \
            reliably, \(Wire.maxUnreliableDataLength) with --unreliable; use push for files. Receivers see it in watch \
            as a data event.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("The peer (its peer id or name), then - to read the message from standard input."))
    var arguments: [String] = []

    @Flag(help: "Send to every member of the session instead of one peer.")
    var all = false

    @Flag(help: "Send as a datagram: may be lost, never delayed by retransmission.")
    var unreliable = false

    @Flag(help: "Send durably: on the daemon's disk before the reply, kept until the peer acknowledges it.")
    var durable = false

    @Option(help: "The message, as text.")
    var text: String?

    @Option(help: ArgumentHelp("A file whose bytes are the message.", valueName: "path"))
    var file: String?

    /// The peer named, if any, and whether standard input is the source.
    private var parsed: (peer: String?, stdin: Bool) {
        var rest = arguments
        let stdin = rest.last == "-"
        if stdin { rest.removeLast() }
        return (rest.first, stdin)
    }

    func validate() throws {
        let (peer, stdin) = parsed
        let named = arguments.count - (stdin ? 1 : 0)
        guard named <= 1 else { throw ValidationError("send takes one peer (then - for standard input)") }
        if all && peer != nil { throw ValidationError("give a peer or --all, not both") }
        if unreliable && durable { throw ValidationError("give --unreliable or --durable, not both") }
        if !all && peer == nil { throw ValidationError("send needs a peer (its id or name) or --all") }
        let sources = [text != nil, file != nil, stdin].filter { $0 }.count
        guard sources == 1 else { throw ValidationError("give exactly one of --text, --file or -") }
    }

    func run() throws {
        let (peer, stdin) = parsed
        let bytes: Data
        if let text {
            bytes = Data(text.utf8)
        } else if let file {
            guard let contents = FileManager.default.contents(atPath: file) else {
                throw ClientError(.usage, "cannot read \(file)")
            }
            bytes = contents
        } else {
            precondition(stdin)
            bytes = FileHandle.standardInput.readDataToEndOfFile()
        }
        let limit = unreliable ? Wire.maxUnreliableDataLength : Wire.maxDataLength
        guard bytes.count <= limit else {
            throw ClientError(
                .usage,
                "a\(unreliable ? "n unreliable" : "") message is at most \(limit) bytes; this one is \(bytes.count)"
                    + (unreliable ? "" : " (use push for files)"))
        }
        let daemon = try global.connect()
        let reply = try daemon.call(
            .send(data: bytes, peer: peer, channel: unreliable ? .unreliable : durable ? .durable : .reliable))
        if global.json {
            Output.line(reply.rawResult)
        } else {
            let result = try reply.decode(SendResult.self)
            let to = result.peers.count == 1 ? "1 peer" : "\(result.peers.count) peers"
            let how = unreliable ? " (unreliable)" : durable ? " (durable)" : ""
            Output.line("sent \(result.bytes) bytes to \(to)\(how)")
        }
    }
}
