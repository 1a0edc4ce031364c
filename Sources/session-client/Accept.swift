import ArgumentParser
import SessionControl

/// `accept ID`: accepts an invitation.
struct Accept: RequestCommand {
    static let configuration = CommandConfiguration(abstract: "Accepts an invitation (see invitations).")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The invitation's number.")
    var id: UInt64

    func request() -> ControlRequest { ControlRequest(command: "accept", id: id) }

    func printText(_ result: AnswerResult, daemon: Daemon) throws(ClientError) {
        Output.line(result.answered ? "accepted invitation \(id)" : "invitation \(id) was no longer waiting")
    }
}
