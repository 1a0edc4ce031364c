// README.md's library example ("As a library: messages, streams and files"), compiled as printed: scripts/test builds
// it, and a unit test (ReadmeExampleTests) checks that README shows this code line for line. Discovery needs the
// Discovery trait, so without it this program is empty.
#if Discovery
    import Foundation
    import LanSession
    import LanSessionDiscovery

    let state = FileManager.default.homeDirectoryForCurrentUser.path + "/.chat"
    var configuration = SessionConfiguration(
        identity: try DeviceIdentity.persistent(in: state),  // the same device after a restart (state/device-key)
        displayName: "ada", sessionName: "chat")  // listens on every interface, any free port
    configuration.admission = .open  // the default, .paired, admits only devices paired with this one
    configuration.inbox = state + "/inbox"  // where files sent to us land (none are taken without one)
    try FileManager.default.createDirectory(atPath: state + "/inbox", withIntermediateDirectories: true)
    let session = try Session(configuration: configuration)
    try await session.start()

    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await SessionDiscovery(session: session).run(on: try await AvahiConnection.connect()) }
        for await event in session.subscribe() {  // each subscriber gets every event, until the session stops
            switch event {
            case .peerChanged(let peer, .connected): try await session.send(Array("hi".utf8), to: [peer])
            case .data(let peer, let bytes, _): print(peer, String(decoding: bytes.readableBytesView, as: UTF8.self))
            case .transfer(let progress): print(progress)  // "notes.pdf from …: 4200000/9000000 bytes (46%)"
            case .streamOpened(let stream):
                group.addTask { for try await chunk in stream { print(stream.name, chunk.count, "bytes") } }
            case .notice(let notice): print(notice)  // e.g. why a device that is not paired does not join
            default: break
            }
        }
        group.cancelAll()  // the discovery runs until cancelled
    }
#endif
