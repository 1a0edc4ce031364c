import ArgumentParser
import Foundation
import SessionControl

/// `streams`: takes the byte streams peers open to this daemon while it runs, and reports each one.
struct Streams: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Takes the byte streams peers open while it runs; prints each one's start and end.",
        discussion: """
            The daemon reads every stream to its end and reports its byte count and SHA-256 (finished) or why it \
            ended early (failed). Without a client running streams, the daemon declines the streams peers open. Runs \
            until interrupted, or until --count reports.
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(parsing: .unconditional, help: "Stop after this many reports (1...\(Limits.events.upperBound)).")
    var count: CommandLineNumber<Int>?

    func validate() throws {
        try count?.validated("--count", in: Limits.events)
    }

    func run() throws {
        let count = count?.value(or: 1)
        let daemon = try global.connect()
        try daemon.send(ControlCommand.streams)
        guard let acknowledgement = try daemon.readLine(deadline: nil) else { return }
        _ = try daemon.reply(from: acknowledgement)
        var seen = 0
        while count.map({ seen < $0 }) ?? true {
            guard let line = try daemon.readLine(deadline: nil) else { return }
            let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if text.isEmpty { continue }
            if global.json {
                Output.line(text)
            } else if let report = try? JSONDecoder().decode(StreamResult.self, from: line) {
                var words = "\(report.phase) stream \(report.id) \"\(report.name)\" from \(report.peerID)"
                switch report.phase {
                case "finished": words += ": \(report.bytes) bytes, SHA-256 \(report.sha256 ?? "?")"
                case "failed": words += " after \(report.bytes) bytes: \(report.reason ?? "?")"
                default: break
                }
                Output.line(words)
            } else {
                Output.line("unreadable report: \(text)")
            }
            seen += 1
        }
    }
}
