import ArgumentParser
import SessionControl

/// `accept ID`: accepts an invitation.
struct Accept: RequestCommand {
    static let configuration = CommandConfiguration(abstract: "Accepts an invitation (see invitations).")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The invitation's number.")
    var id: CommandLineNumber<UInt64>

    func validate() throws { try Invitations.validate(id) }

    func prepare(_ daemon: Daemon) throws(ClientError) { try Invitations.checkPending(id, daemon: daemon) }

    func request() -> ControlCommand { .accept(id: id.value(or: 0)) }

    func printText(_ result: AnswerResult, daemon: Daemon) throws(ClientError) {
        Output.line(
            result.answered
                ? "accepted invitation \(id.value(or: 0))" : "invitation \(id.value(or: 0)) was no longer waiting")
    }
}
