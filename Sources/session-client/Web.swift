import ArgumentParser
import SessionControl

/// `web`: the address of the daemon's page, with its token.
struct Web: RequestCommand {
    static let configuration = CommandConfiguration(
        abstract: "Prints the address of the page (sessiond --http), with its token: open it in a browser.")

    @OptionGroup var global: GlobalOptions

    func request() -> ControlCommand { ControlCommand.web }

    func printText(_ result: WebResult, daemon: Daemon) throws(ClientError) {
        Output.line(result.url)
    }
}
