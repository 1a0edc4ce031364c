import Foundation
import Logging
import SessionControl
import TestSupport
import Testing

@testable import sessiond

/// The daemon's own tables (control connections, `watch` connections and their writers, `streams` clients, the hub's
/// streams) come back to their sizes once their clients are gone.
@Suite("Daemon table sizes", .serialized)
struct DaemonTableSizeTests {
    static let cycles = 200

    @Test("control clients, watchers and stream listeners connecting and leaving leave every table as it was")
    func controlClients() async throws {
        try await ControlDispatcherTests.withDispatcher { dispatcher in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tables-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("control.sock").path
            let control = try await ControlServer.bind(
                path: path, dispatcher: dispatcher, logger: Logger(label: "test"))
            let serving = Task { await control.run() }
            defer { serving.cancel() }
            let baseline = await dispatcher.tableSizes(control: control)
            #expect(baseline["controlConnections"] == 0 && baseline["watchers"] == 0, "\(baseline)")

            for index in 0..<Self.cycles {
                let client = try ControlClient(path: path)
                switch index % 4 {
                case 0:
                    _ = try client.reply(to: .status)
                case 1:
                    _ = try client.reply(to: .increment(count: 1))
                case 2:
                    try client.send(.watch())
                    _ = try client.readLine()
                default:
                    try client.send(.streams)
                    _ = try client.readLine()
                }
                // The client goes as it leaves this turn: its socket closes.
            }
            var sizes: [String: Int] = [:]
            let back = await waitUntil(.seconds(10)) {
                sizes = await dispatcher.tableSizes(control: control)
                return sizes == baseline
            }
            let grown = sizes.filter { baseline[$0.key] != $0.value }
                .map { "\($0.key): \(baseline[$0.key] ?? 0) → \($0.value)" }
            #expect(back, "\(grown.sorted().joined(separator: ", "))")
        }
    }
}
