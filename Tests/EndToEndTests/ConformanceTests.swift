import Foundation
import TestSupport
import Testing

/// A second implementation of the protocol, written from the spec (Tests/Conformance/conformance.py), joins a real
/// sessiond on a test host and checks each behaviour the spec states; a failure names the section.
@Suite(
    "Conformance of sessiond to the spec", .serialized,
    .disabled(
        if: TestLab.unavailableReason != nil || PythonPeer.unavailableReason != nil,
        Comment(rawValue: TestLab.unavailableReason ?? PythonPeer.unavailableReason ?? ""))
)
struct ConformanceTests {
    static let program = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Conformance/conformance.py").path

    @Test("every check of the independent peer passes against sessiond")
    func conformance() async throws {
        let cluster = try Cluster(hosts: 1)
        try cluster.start(1, extra: ["--no-discovery"])
        _ = await waitUntil(.seconds(10), every: .milliseconds(50)) { (try? cluster.peerID(1)) != nil }
        let result = try cluster.lab.run(
            1,
            [
                "python3", Self.program, "--sessiond-port", "47000", "--host", "127.0.0.1", "--client", Cluster.client,
                "--control", "/run/lansession/sessiond.sock", "--session", "e2e", "--sessiond", Cluster.daemon,
                "--state-dir", "/run/conformance", "--seconds", "120",
            ], timeout: 150)
        let lines = PythonPeer.events(result.stdout)
        let checks = lines.filter { $0["check"] != nil }
        #expect(!checks.isEmpty, "no checks ran: \(result.stderr.suffix(2000))")
        for check in checks {
            let name = check["check"] as? String ?? "?"
            let section = check["section"] as? String ?? "?"
            print(
                "measured: conformance \(name) (§\(section)): \(check["passed"] as? Bool == true ? "passed" : "FAILED")"
            )
            #expect(check["passed"] as? Bool == true, "§\(section) \(name): \(check["detail"] ?? "")")
        }
        #expect(result.status == 0, "exit \(result.status): \(result.stderr.suffix(2000))")
    }
}
