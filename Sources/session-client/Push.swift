import ArgumentParser
import Foundation
import SessionControl

#if canImport(Glibc)
    import Glibc
#endif

/// `push`: sends a file to a peer, with progress.
struct Push: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sends a file to a peer; it lands, verified, in the peer's inbox (sessiond --inbox).",
        discussion: """
            Shows a progress bar on a terminal; with --json, one progress object per line and the result last. An \
            interrupted transfer resumes where it stopped when the same file is pushed again. Interrupting push \
            cancels the transfer on both sides.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("The file to send.", valueName: "path"))
    var path: String

    @Option(help: "The peer: its peer id (16 hex digits) or its name.")
    var to: String

    @Option(help: "The name the receiver stores it under (default: the file's name).")
    var name: String?

    func validate() throws {
        guard !to.isEmpty else { throw ValidationError("--to needs a peer id or name") }
        if let name, name.isEmpty || name.contains("/") || name.hasPrefix(".") {
            throw ValidationError("--name must be a file name (no /, not starting with a dot)")
        }
    }

    func run() throws {
        let absolute =
            path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: absolute, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw ClientError(.usage, "no file \(path)")
        }
        let daemon = try global.connect()
        try daemon.send(.push(path: absolute, peer: to, name: name))
        let bar = !global.json && isatty(STDERR_FILENO) == 1
        while true {
            guard let line = try daemon.readLine(deadline: nil) else {
                throw ClientError(.broken, "sessiond closed the connection during the transfer")
            }
            let reply = try daemon.reply(from: line)
            let result = try reply.decode(TransferResult.self)
            let final = ["finished", "failed", "cancelled"].contains(result.phase)
            if global.json {
                Output.line(reply.rawResult)
            } else if bar && !final {
                Output.write("\r" + Self.bar(result), to: STDERR_FILENO)
            }
            guard final else { continue }
            if bar { Output.write("\r\u{1B}[K", to: STDERR_FILENO) }
            guard result.phase == "finished" else {
                throw ClientError(.refused, "transfer \(result.phase): \(result.reason ?? "no reason given")")
            }
            if !global.json {
                let rate = result.megabytesPerSecond.map { String(format: ", %.1f MB/s", $0) } ?? ""
                let time = result.seconds.map { String(format: " in %.2f s", $0) } ?? ""
                let resumed = result.resumedFrom > 0 ? " (resumed at \(result.resumedFrom))" : ""
                Output.line(
                    "sent \(result.name) to \(to): \(result.total) bytes\(time)\(rate)\(resumed), "
                        + "sha256 \(result.sha256 ?? "?")")
            }
            return
        }
    }

    /// `[#########           ]  45%  90.1/200.0 MB`
    static func bar(_ result: TransferResult) -> String {
        let fraction = result.total == 0 ? 1 : Double(result.bytes) / Double(result.total)
        let width = 30
        let filled = Int((fraction * Double(width)).rounded(.down))
        return "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "] "
            + String(
                format: "%3d%%  %.1f/%.1f MB", Int(fraction * 100), Double(result.bytes) / 1e6,
                Double(result.total) / 1e6)
    }
}
