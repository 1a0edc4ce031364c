import Foundation
import TestSupport
import Testing

/// The page (sessiond --http) on two test hosts, in a real browser: headless Chromium from Debian driven by Selenium
/// (Tests/Page/page_check.py, run inside host 1). Real pointer drags, clicks, a late page, the token and the Origin,
/// kill -9 and a restart; screenshots of both pages land in .build/page-screenshots.
@Suite(
    "The page in a real browser", .serialized,
    .disabled(
        if: TestLab.unavailableReason != nil || PageBrowser.unavailableReason != nil,
        Comment(rawValue: TestLab.unavailableReason ?? PageBrowser.unavailableReason ?? ""))
)
struct PageTests {
    @Test(
        "a drag on host 1's page moves the bubble on host 2's; a held bubble cannot be taken; ten clicks are ten; a late page, the token, the Origin, kill -9 and a reconnect"
    )
    func pageInABrowser() async throws {
        let cluster = try Cluster(hosts: 2)
        let address2 = try cluster.lab.address(2)
        let pages = [1: "127.0.0.1:8080", 2: "\(address2):8080"]
        try cluster.start(1, extra: ["--http", pages[1]!])
        try cluster.start(2, extra: ["--http", pages[2]!])
        #expect(await waitUntil(.seconds(10), every: .milliseconds(50)) { cluster.connectedPeers(1) == 1 })
        let urls = try (1...2).map { host in
            let result = try cluster.client(host, ["web"]) as? [String: Any]
            return try #require(result?["url"] as? String, "session-client web on host \(host)")
        }
        #expect(urls[0].hasPrefix("http://127.0.0.1:8080/?token="), "\(urls[0])")
        let ids = try (1...2).map { try cluster.peerID($0) }
        let shots = PageBrowser.screenshots
        try? FileManager.default.removeItem(atPath: shots)
        let daemon2 = try #require(cluster.daemons[2])
        let check = try cluster.lab.spawn(
            1,
            [
                "python3", PageBrowser.program, "--page", urls[0], "--page", urls[1], "--client", Cluster.client,
                "--control", "/run/lansession/sessiond.sock", "--ids", ids.joined(separator: ","), "--shots", shots,
                "--kill-pid", "\(daemon2.pid)", "--drags", "20",
            ])
        defer { check.stop() }
        // The check kills daemon 2 and says so; it comes back with the same state directory (and page token).
        if await check.waitFor(timeout: 120, { $0["event"] as? String == "killed" }) != nil {
            cluster.daemons[2]?.stop()
            try cluster.start(2, extra: ["--http", pages[2]!])
        }
        let summary = await check.waitFor(timeout: 60) { $0["summary"] != nil }
        let checks = check.events.filter { $0["check"] != nil }
        for line in checks {
            let name = line["check"] as? String ?? "?"
            print(
                "measured: page \(name): \(line["passed"] as? Bool == true ? "passed" : "FAILED"): \(line["detail"] ?? "")"
            )
            #expect(line["passed"] as? Bool == true, "\(name): \(line["detail"] ?? "")")
        }
        if let latency = check.events.first(where: { $0["event"] as? String == "latency" }) {
            print("measured: page drag to the other page's frame: \(latency)")
        }
        print("measured: page screenshots in \(shots)")
        #expect(
            checks.count >= 12, "checks that ran: \(checks.map { $0["check"] ?? "?" }); \(check.stderr.suffix(1500))")
        #expect(summary != nil, "the browser check did not finish: \(check.stderr.suffix(1500))")
    }
}

/// Headless Chromium and Selenium, which scripts/test installs (Debian's chromium and chromium-driver, Selenium from
/// PyPI), and the check that drives them.
enum PageBrowser {
    static let program = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Page/page_check.py").path

    /// Where the screenshots go: beside the build, kept after the run.
    static let screenshots = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(".build/page-screenshots").path

    static let unavailableReason: String? = {
        guard let result = try? TestLab.run(["python3", "-c", "import selenium"], timeout: 20), result.status == 0
        else { return "Selenium is not installed (scripts/test installs it from PyPI)" }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver") else {
            return "chromium-driver is not installed (scripts/test installs it)"
        }
        return nil
    }()
}
