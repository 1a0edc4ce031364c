import ArgumentParser
import SessionControl

/// `decline ID [--reason TEXT]`: declines an invitation.
struct Decline: RequestCommand {
    static let configuration = CommandConfiguration(abstract: "Declines an invitation (see invitations).")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The invitation's number.")
    var id: CommandLineNumber<UInt64>

    func validate() throws { try Invitations.validate(id) }

    func prepare(_ daemon: Daemon) throws(ClientError) { try Invitations.checkPending(id, daemon: daemon) }

    @Option(help: "Why, in words, for this daemon's log (the inviting peer hears the reason code `rejected`).")
    var reason: String?

    func request() -> ControlCommand { .decline(id: id.value(or: 0), reason: reason) }

    func printText(_ result: AnswerResult, daemon: Daemon) throws(ClientError) {
        Output.line(
            result.answered
                ? "declined invitation \(id.value(or: 0))" : "invitation \(id.value(or: 0)) was no longer waiting")
    }
}
