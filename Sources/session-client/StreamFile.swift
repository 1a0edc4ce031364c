import ArgumentParser
import Foundation
import SessionControl

/// `stream`: sends a file's bytes to a peer as a byte stream.
struct StreamFile: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stream",
        abstract: "Sends a file's bytes to a peer as a byte stream (read there by a client running streams).",
        discussion: """
            Ends when every byte and the stream's end are on the reliable channel, printing the bytes sent and their \
            SHA-256. The peer's daemon takes byte streams only while a client listens there (session-client \
            streams); otherwise it cancels the stream, and this fails (unless the whole stream fitted in the \
            receiver's window, 256 KiB, before the cancellation came back: success here is not a receipt).
            """
    )

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("The file whose bytes to send.", valueName: "path"))
    var path: String

    @Option(help: "The peer: its peer id (16 hex digits) or its name.")
    var to: String

    @Option(help: "The stream's name (default: the file's name).")
    var name: String?

    func validate() throws {
        guard !to.isEmpty else { throw ValidationError("--to needs a peer id or name") }
    }

    func run() throws {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        guard FileManager.default.isReadableFile(atPath: absolute) else { throw ClientError(.usage, "no file \(path)") }
        let daemon = try global.connect()
        let reply = try daemon.call(.stream(path: absolute, peer: to, name: name))
        if global.json {
            Output.line(reply.rawResult)
        } else {
            let result = try reply.decode(StreamResult.self)
            Output.line(
                "streamed \(result.bytes) bytes to \(result.peerID) as \"\(result.name)\" (stream \(result.id)), "
                    + "SHA-256 \(result.sha256 ?? "?")")
        }
    }
}
