import ArgumentParser
import SessionControl

/// `decline ID [--reason TEXT]`: declines an invitation.
struct Decline: RequestCommand {
    static let configuration = CommandConfiguration(abstract: "Declines an invitation (see invitations).")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The invitation's number.")
    var id: UInt64

    @Option(help: "Why, in words, for the inviting peer.")
    var reason: String?

    func request() -> ControlRequest { ControlRequest(command: "decline", id: id, reason: reason) }

    func printText(_ result: AnswerResult, daemon: Daemon) throws(ClientError) {
        Output.line(result.answered ? "declined invitation \(id)" : "invitation \(id) was no longer waiting")
    }
}
