// README.md's application of its own ("Applications of your own"), compiled as printed: scripts/test builds it, and a
// unit test (ReadmeExampleTests) checks that README shows the code below the session's line for line.
import LanSession
import WireCodec

var configuration = SessionConfiguration(displayName: "ada", sessionName: "board")
configuration.admission = .open
let session = try Session(configuration: configuration)

final class StatusBoard: SessionApplication {
    let appNumbers: Set<UInt8> = [1]
    unowned let context: any ApplicationContext
    private(set) var statuses: [PeerID: String] = [:]
    var mine = ""

    func set(_ status: String) {
        mine = status
        try? context.sendReliablyToMembers(.appMessage(AppMessage(app: 1, bytes: Array(status.utf8))))
    }
    func received(_ message: Message, from peer: PeerID, reliably: Bool) {
        if case .appMessage(let status) = message { statuses[peer] = String(decoding: status.bytes, as: UTF8.self) }
    }
    func peerConnected(_ peer: PeerID) {  // a late joiner gets the board at once
        try? context.sendReliably(.appMessage(AppMessage(app: 1, bytes: Array(mine.utf8))), to: peer)
    }
    func peerMissedMessages(_ peer: PeerID) { peerConnected(peer) }  // held back while it was away: the latest
    init(context: any ApplicationContext) { self.context = context }
}

let board = try await session.addApplication { StatusBoard(context: $0) }  // before start()
try await session.start()
try await board.call { $0.set("in a meeting") }

await session.stop()
