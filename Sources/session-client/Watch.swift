import ArgumentParser
import Foundation
import SessionControl

/// `watch`: prints the daemon's events as they happen, one line each.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Prints the daemon's events as they happen, one per line.",
        discussion: """
            Runs until interrupted, or until --count events or --timeout seconds; both end with status 0. With --json, \
            each event carries "time": when the daemon saw it, in UTC with milliseconds (2026-11-23T22:40:01.123Z).
            """
    )

    @OptionGroup var global: GlobalOptions

    @Option(parsing: .unconditional, help: "Stop after this many events (1...\(Limits.events.upperBound)).")
    var count: CommandLineNumber<Int>?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Stop after this many seconds (0.001...\(Int(Limits.seconds.upperBound))).", valueName: "seconds"))
    var timeout: CommandLineNumber<Double>?

    func validate() throws {
        try count?.validated("--count", in: Limits.events)
        try timeout?.validated("--timeout", in: Limits.seconds, unit: "seconds")
    }

    func run() throws {
        let count = count?.value(or: 1)
        let deadline = timeout.map { Monotonic.seconds() + $0.value(or: 1) }
        let daemon = try global.connect()
        try daemon.send(ControlCommand.watch)
        guard let acknowledgement = try daemon.readLine(deadline: deadline) else { return }
        _ = try daemon.reply(from: acknowledgement)
        var seen = 0
        while count.map({ seen < $0 }) ?? true {
            guard let line = try daemon.readLine(deadline: deadline) else { return }
            let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if text.isEmpty { continue }
            if global.json {
                Output.line(text)  // the daemon stamps each event with "time"
            } else if let event = try? JSONDecoder().decode(ControlEvent.self, from: line) {
                Output.line(event.humanText)
            } else {
                Output.line("unreadable event: \(text)")
            }
            seen += 1
        }
    }
}
