import ArgumentParser
import SessionControl

/// `bubble list | pickup | move | drop`: the three bubbles, one request at a time.
struct Bubble: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Lists, picks up, moves or drops a bubble (see bubbles for the live view).",
        discussion: "Coordinates run over 0...300 on both axes; give negative ones after --.",
        subcommands: [List.self, Pickup.self, Move.self, Drop.self]
    )

    @OptionGroup var global: GlobalOptions

    func run() throws {
        throw ClientError(.usage, "bubble needs a subcommand: list, pickup, move or drop")
    }

    /// `bubble list`: where each bubble is and who holds it.
    struct List: RequestCommand {
        static let configuration = CommandConfiguration(abstract: "Lists the bubbles: position and holder.")

        @OptionGroup var global: GlobalOptions

        func request() -> ControlCommand { ControlCommand.bubbles }

        func printText(_ result: [BubbleResult], daemon: Daemon) throws(ClientError) {
            var table = TextTable(headers: ["BUBBLE", "X", "Y", "HOLDER"], rightAligned: [0, 1, 2])
            for bubble in result.sorted(by: { $0.view < $1.view }) {
                table.rows.append([
                    String(bubble.view), Output.coordinate(bubble.x), Output.coordinate(bubble.y),
                    bubble.holder ?? "free",
                ])
            }
            Output.lines(table.render())
        }
    }

    /// `bubble pickup ID`: asks the coordinator for a bubble.
    struct Pickup: RequestCommand {
        static let configuration = CommandConfiguration(
            abstract: "Asks for a bubble; the coordinator's answer arrives as a holder event.")

        @OptionGroup var global: GlobalOptions

        @Argument(help: "The bubble's number (0...2).")
        var id: CommandLineNumber<Int>

        func validate() throws { try Bubble.validate(id: id) }

        func request() -> ControlCommand { ControlCommand.pickUp(view: id.value(or: 0)) }

        func printText(_ result: DoneResult, daemon: Daemon) throws(ClientError) {
            let id = id.value(or: 0)
            Output.line(result.done ? "asked for bubble \(id)" : "bubble \(id): not done")
        }
    }

    /// `bubble move ID X Y`: moves the bubble this peer holds.
    struct Move: RequestCommand {
        static let configuration = CommandConfiguration(abstract: "Moves a bubble this peer holds.")

        @OptionGroup var global: GlobalOptions

        @Argument(help: "The bubble's number (0...2).")
        var id: CommandLineNumber<Int>

        @Argument(help: "The new x.")
        var x: CommandLineNumber<Double>

        @Argument(help: "The new y.")
        var y: CommandLineNumber<Double>

        func validate() throws {
            try Bubble.validate(id: id)
            try Bubble.validate(x: x, y: y)
        }

        func request() -> ControlCommand {
            .move(view: id.value(or: 0), x: x.value(or: 0), y: y.value(or: 0))
        }

        func printText(_ result: DoneResult, daemon: Daemon) throws(ClientError) {
            let (id, x, y) = (id.value(or: 0), x.value(or: 0), y.value(or: 0))
            let position = "(\(Output.coordinate(x)), \(Output.coordinate(y)))"
            Output.line(result.done ? "bubble \(id) moved to \(position)" : "bubble \(id): not done")
        }
    }

    /// `bubble drop ID [X Y]`: releases the bubble this peer holds.
    struct Drop: RequestCommand {
        static let configuration = CommandConfiguration(
            abstract: "Drops a bubble this peer holds, where it is or at X Y.")

        @OptionGroup var global: GlobalOptions

        @Argument(help: "The bubble's number (0...2).")
        var id: CommandLineNumber<Int>

        @Argument(help: "Where to drop it: x (with y).")
        var x: CommandLineNumber<Double>?

        @Argument(help: "Where to drop it: y.")
        var y: CommandLineNumber<Double>?

        func validate() throws {
            try Bubble.validate(id: id)
            if let x {
                guard let y else { throw ValidationError("drop needs both X and Y, or neither") }
                try Bubble.validate(x: x, y: y)
            }
        }

        func request() -> ControlCommand {
            .drop(view: id.value(or: 0), x: x?.value(or: 0), y: y?.value(or: 0))
        }

        func printText(_ result: DoneResult, daemon: Daemon) throws(ClientError) {
            let (id, x, y) = (id.value(or: 0), x?.value(or: 0), y?.value(or: 0))
            guard result.done else {
                Output.line("bubble \(id): not done")
                return
            }
            if let x, let y {
                Output.line("bubble \(id) dropped at (\(Output.coordinate(x)), \(Output.coordinate(y)))")
            } else {
                Output.line("bubble \(id) dropped")
            }
        }
    }

    /// The bubbles' numbers.
    static let ids = 0...2

    /// A bubble's number: 0, 1 or 2.
    static func validate(id: CommandLineNumber<Int>) throws {
        try id.validated("bubble ID", in: ids)
    }

    /// Coordinates: finite numbers, within reach of the field.
    static func validate(x: CommandLineNumber<Double>, y: CommandLineNumber<Double>) throws {
        try x.validated("X", in: Limits.coordinate)
        try y.validated("Y", in: Limits.coordinate)
    }
}
