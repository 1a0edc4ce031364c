import ArgumentParser
import Foundation
import SessionControl

#if canImport(Glibc)
    import Glibc
#endif

/// `watch`: prints the daemon's events as they happen, one line each.
struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Prints the daemon's events as they happen, one per line.",
        discussion: """
            Runs until interrupted, or until --count events or --timeout seconds; both end with status 0. With --json, \
            each event carries "seq", its number in the daemon's run (from 1), and "time": when the daemon saw it, in \
            UTC with milliseconds (2026-11-23T22:40:01.123Z). With --since N, the events after N the daemon still \
            holds (its last 10,000) come first, each once; if it no longer holds them all, an eventsMissed line says \
            how many are gone. With --reconnect, a closed connection is opened again and resumes after the last event \
            printed.
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

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("First the events after this number (a seq of --json output).", valueName: "seq"))
    var since: CommandLineNumber<UInt64>?

    @Option(name: .customLong("run"), help: ArgumentHelp("The daemon's run the --since number is of.", valueName: "id"))
    var runID: String?

    @Flag(help: "When the daemon closes the connection, connect again and go on after the last event printed.")
    var reconnect = false

    func validate() throws {
        try count?.validated("--count", in: Limits.events)
        try timeout?.validated("--timeout", in: Limits.seconds, unit: "seconds")
        try since?.validated("--since", in: Limits.sequence)
        if runID != nil, since == nil { throw ValidationError("--run goes with --since") }
        if let runID, runID.isEmpty { throw ValidationError("--run needs a non-empty id") }
    }

    func run() throws {
        let count = count?.value(or: 1)
        let deadline = timeout.map { Monotonic.seconds() + $0.value(or: 1) }
        var position = WatchPosition(run: runID, since: since?.value(or: 0))
        var printed = 0
        var daemon = try global.connect()
        while true {
            let broken: ClientError
            do {
                try watch(daemon, from: &position, printed: &printed, count: count, deadline: deadline)
                return
            } catch {
                broken = error
            }
            guard reconnect, broken.kind == .broken else { throw broken }
            guard let next = reconnected(by: deadline) else { return }
            daemon = next
        }
    }

    /// Subscribes on `daemon` after `position`, and prints the events as they come until `count` or `deadline`.
    private func watch(
        _ daemon: Daemon, from position: inout WatchPosition, printed: inout Int, count: Int?, deadline: Double?
    ) throws(ClientError) {
        try daemon.send(position.request)
        guard let acknowledgement = try daemon.readLine(deadline: deadline) else { return }
        let subscribed = try daemon.reply(from: acknowledgement)
        if let result = try? subscribed.decode(WatchResult.self) { position.subscribed(result) }
        while count.map({ printed < $0 }) ?? true {
            guard let line = try daemon.readLine(deadline: deadline) else { return }
            let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if text.isEmpty { continue }
            if global.json {
                Output.line(text)  // the daemon numbers each event ("seq") and stamps it with "time"
            } else if let event = try? JSONDecoder().decode(ControlEvent.self, from: line) {
                Output.line(event.humanText)
            } else {
                Output.line("unreadable event: \(text)")
            }
            position.took(line)
            printed += 1
        }
    }

    /// A new connection once the daemon's socket takes one again; nil when `deadline` passed first.
    private func reconnected(by deadline: Double?) -> Daemon? {
        while deadline.map({ Monotonic.seconds() < $0 }) ?? true {
            if let daemon = try? global.connect() { return daemon }
            usleep(250_000)
        }
        return nil
    }
}
