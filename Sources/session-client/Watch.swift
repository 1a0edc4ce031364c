import ArgumentParser
import Foundation
import SessionControl

/// `watch`: prints the daemon's events as they happen, one line each.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Prints the daemon's events as they happen, one per line.",
        discussion: "Runs until interrupted, or until --count events or --timeout seconds; both end with status 0."
    )

    @OptionGroup var global: GlobalOptions

    @Option(help: "Stop after this many events.")
    var count: Int?

    @Option(help: ArgumentHelp("Stop after this many seconds.", valueName: "seconds"))
    var timeout: Double?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1 (got \(count))") }
        if let timeout, !(timeout.isFinite && timeout > 0) {
            throw ValidationError("--timeout must be a positive number of seconds (got \(timeout))")
        }
    }

    func run() throws {
        let deadline = timeout.map { Monotonic.seconds() + $0 }
        let daemon = try global.connect()
        try daemon.send(ControlRequest(command: "watch"))
        guard let acknowledgement = try daemon.readLine(deadline: deadline) else { return }
        _ = try daemon.reply(from: acknowledgement)
        var seen = 0
        while count.map({ seen < $0 }) ?? true {
            guard let line = try daemon.readLine(deadline: deadline) else { return }
            let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if text.isEmpty { continue }
            if global.json {
                Output.line(text)
            } else if let event = try? JSONDecoder().decode(EventResult.self, from: line) {
                Output.line(event.humanText)
            } else {
                Output.line("unreadable event: \(text)")
            }
            seen += 1
        }
    }
}
