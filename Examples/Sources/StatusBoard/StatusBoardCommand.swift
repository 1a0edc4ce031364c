import ArgumentParser
import LanSession
import NIOPosix

/// `status-board`: each line typed is this peer's status; the board of every peer's status is shown as it changes.
@main
struct StatusBoardCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status-board", abstract: "A status line per peer, shared on the LAN, built on LanSession.")

    @Option(help: "Your name.") var name: String
    @Option(help: "The board (the session's name).") var board = "status"
    @Option(help: "Address to listen on.") var listen = "0.0.0.0"
    @Option(help: "Port to listen on (0: any).") var port = 0
    @Option(help: "A peer to reach at HOST:PORT (repeatable).") var peer: [String] = []

    func run() async throws {
        let endpoints = try peer.map { address in
            guard let endpoint = Endpoint(parsing: address) else {
                throw ValidationError("--peer \(address) is not HOST:PORT")
            }
            return endpoint
        }
        var configuration = SessionConfiguration(displayName: name, sessionName: board, host: listen, port: port)
        configuration.admission = .open  // anyone on the board's network; links are still encrypted
        let session = try Session(configuration: configuration)
        let changes = EventFanout<StatusBoard.Change>(missed: StatusBoard.Change.missed)
        let statusBoard = try await session.addApplication { StatusBoard(context: $0, changes: changes) }
        print("[\(name) on \(board), port \(try await session.start()); type a status, or /quit]")
        for endpoint in endpoints { try await session.connect(to: endpoint) }
        let shown = changes.subscribe(bufferSize: 256)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in shown {
                    let board = try await statusBoard.call { $0.statuses }
                    let names = Dictionary(
                        try await session.peers().map { ($0.peerID, $0.name) }, uniquingKeysWith: { a, _ in a })
                    print(
                        board.map { "  \(names[$0.key] ?? "\($0.key)"): \($0.value)" }.sorted().joined(separator: "\n"))
                }
            }
            group.addTask {
                while let line = try await NIOThreadPool.singleton.runIfActive({ readLine() }), line != "/quit" {
                    try await statusBoard.call { $0.set(line) }
                }
            }
            try await group.next()
            group.cancelAll()
        }
        await session.stop()
    }
}
