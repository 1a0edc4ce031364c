import ArgumentParser
import SessionControl

/// `counter`: this peer's count, every other peer's, and the total.
struct Counter: RequestCommand {
    static let configuration = CommandConfiguration(abstract: "Shows every peer's count and the total.")

    @OptionGroup var global: GlobalOptions

    func request() -> ControlCommand { ControlCommand.counter }

    func printText(_ result: CounterResult, daemon: Daemon) throws(ClientError) {
        // This peer's name and id come from `status`; the table does without them if that fails.
        let me = try? daemon.call(ControlCommand.status).decode(StatusResult.self)
        var table = TextTable(headers: ["PEER ID", "NAME", "COUNT"], rightAligned: [2])
        table.rows.append([me?.peerID ?? "-", (me.map { $0.name + " " } ?? "") + "(this peer)", "\(result.local)"])
        let others = result.peers.sorted { ($0.value.name, $0.key) < ($1.value.name, $1.key) }
        for (peerID, peer) in others {
            table.rows.append([peerID, peer.name, "\(peer.count)"])
        }
        table.rows.append(["total", "", "\(result.total)"])
        Output.lines(table.render().map { $0.hasPrefix("PEER ID") ? $0 : $0 + " times" })
    }
}
