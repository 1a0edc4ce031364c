import ArgumentParser
import Foundation
import LanSession
import NIOPosix

#if Discovery
    import LanSessionDiscovery
#endif

/// `chat`: every line typed goes to every peer of the session; `/to NAME text` to one, `/file PATH NAME` sends a
/// file, `/peers` lists who is there, `/quit` leaves.
@main
struct Chat: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "A chat on the LAN, built on LanSession.",
        discussion: """
            Type a line to send it to everyone; /to NAME TEXT sends to one peer, /file PATH NAME sends a file (it \
            lands in the peer's --inbox), /peers lists the peers, /quit leaves.
            """)

    @Option(help: "Your name in the chat.") var name: String
    @Option(help: "The chat room (the session's name).") var room = "chat"
    @Option(help: "Address to listen on.") var listen = "0.0.0.0"
    @Option(help: "Port to listen on (0: any).") var port = 0
    @Option(help: "A peer to reach at HOST:PORT (repeatable).") var peer: [String] = []
    #if Discovery
        @Flag(help: "Find peers on the LAN with mDNS (needs avahi-daemon).") var discover = false
    #endif
    @Option(help: "Where files sent to you land.") var inbox: String?

    func run() async throws {
        // A stable device key across restarts: peers recognise us, interrupted files resume.
        let state = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".chat-\(name)").path
        var configuration = SessionConfiguration(
            identity: try DeviceIdentity.persistent(in: state), displayName: name, sessionName: room, host: listen,
            port: port)
        // Anyone in the room may talk (links are still encrypted); `.paired` would admit paired devices only.
        configuration.admission = .open
        configuration.inbox = inbox
        let session = try Session(configuration: configuration)
        let port = try await session.start()
        print("[\(name) in \(room), port \(port); type /quit to leave]")
        for address in peer {
            guard let endpoint = Endpoint(parsing: address) else {
                throw ValidationError("--peer \(address) is not HOST:PORT")
            }
            try await session.connect(to: endpoint)
        }
        let events = session.subscribe()
        #if Discovery
            let avahi = discover ? try await AvahiConnection.connect() : nil
        #endif
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await Self.show(events) }
            #if Discovery
                if let avahi {
                    group.addTask { try await SessionDiscovery(session: session).run(on: avahi) }
                }
            #endif
            group.addTask { try await Self.read(into: session) }
            try await group.next()  // the reader ended: /quit or end of input
            group.cancelAll()
        }
        await session.stop()
    }

    /// Prints what happens: people coming and going, their messages, files.
    static func show(_ events: AsyncStream<SessionEvent>) async {
        var names: [PeerID: String] = [:]
        for await event in events {
            switch event {
            case .peerConnected(let id, let name):
                names[id] = name
                print("* \(name) joined")
            case .peerChanged(let id, .notConnected(let reason)) where names[id] != nil:
                print("* \(names[id]!) is gone (\(reason))")
            case .data(let id, let bytes, _):
                print("<\(names[id] ?? "\(id)")> \(String(decoding: bytes.readableBytesView, as: UTF8.self))")
            case .transfer(let progress):
                switch progress.phase {
                case .finished(let path?, _): print("* file from \(names[progress.peer] ?? "?"): \(path)")
                case .finished(nil, _): print("* \(progress.name) delivered")
                case .failed(let reason): print("* \(progress.name): failed, \(reason)")
                case .cancelled(_, let reason): print("* \(progress.name): cancelled, \(reason)")
                case .started, .inProgress: break
                }
            default:
                break
            }
        }
    }

    /// Reads lines from standard input (off the concurrency pool: reading blocks) and acts on them.
    static func read(into session: Session) async throws {
        while let line = try await NIOThreadPool.singleton.runIfActive({ readLine() }) {
            let text = line.trimmingCharacters(in: .whitespaces)
            if text.isEmpty { continue }
            do throws(SessionError) {
                if text == "/quit" { return }
                if text == "/peers" {
                    for peer in try await session.peers() {
                        print("  \(peer.name) \(peer.state) \(peer.address ?? "")")
                    }
                } else if text.hasPrefix("/to ") {
                    let parts = text.dropFirst(4).split(separator: " ", maxSplits: 1)
                    guard parts.count == 2 else { print("usage: /to NAME TEXT"); continue }
                    try await session.send(Array(parts[1].utf8), to: [try await peer(named: parts[0], in: session)])
                } else if text.hasPrefix("/file ") {
                    let parts = text.dropFirst(6).split(separator: " ")
                    guard parts.count == 2 else { print("usage: /file PATH NAME"); continue }
                    let to = try await peer(named: parts[1], in: session)
                    try await session.sendResource(at: String(parts[0]), to: to)
                } else {
                    try await session.send(Array(text.utf8))  // to everyone, reliably
                }
            } catch {
                print("! \(error.message)")
            }
        }
    }

    static func peer(named name: Substring, in session: Session) async throws(SessionError) -> PeerID {
        guard let peer = try await session.peers().first(where: { $0.name == name }) else {
            throw SessionError(.noSuchPeer, "nobody called \(name)")
        }
        return peer.peerID
    }
}
