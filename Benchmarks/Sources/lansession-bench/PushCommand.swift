import ArgumentParser
import Foundation

/// `push`: a file pushed between two release sessiond on test hosts, beside its anchors between the same hosts in the
/// same run: the link's limit (iperf3, one TCP stream), a raw TCP copy of the same file (sendfile to a file), and what
/// a person would use instead (scp, OpenSSH, with AES-128-GCM and with ChaCha20-Poly1305); and the round trip of pings
/// while the file flows. Each row also gives its CPU per byte: the user and system time of the sending and the
/// receiving processes during the transfer, over the bytes moved.
struct PushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "(root) A file pushed between two release sessiond on test hosts, beside iperf3, a raw copy and scp.",
        discussion: """
            Needs iperf3, openssh-server and openssh-client (scripts/bench installs them). --rate shapes host 1's \
            link (tc tbf) as a real LAN would limit it. The links are sealed (Noise) with admission open, or with \
            --secret a shared secret's admission (sealed the same way); --insecure does not seal them.
            """)

    @OptionGroup var output: OutputOptions

    @Option(help: "The file's size in MB (10^6 bytes).")
    var megabytes = 200

    @Option(help: "Shapes host 1's link to this rate (tc tbf), e.g. 1gbit.")
    var rate: String?

    @Flag(help: "Admission by a shared secret.")
    var secret = false

    @Flag(help: "Links not sealed.")
    var insecure = false

    func validate() throws {
        guard megabytes >= 1 else { throw ValidationError("--megabytes needs a whole number") }
        if let rate, rate.wholeMatch(of: /[1-9][0-9]*[kmg]?bit/) == nil {
            throw ValidationError("--rate needs a rate like 1gbit")
        }
        guard !(secret && insecure) else { throw ValidationError("--secret or --insecure, not both") }
    }

    /// How the daemons' links are admitted and sealed, as the report says it.
    var sealing: String {
        if secret { return "sealed (Noise, shared-secret admission)" }
        if insecure { return "not sealed (--insecure)" }
        return "sealed (Noise, admission open)"
    }

    func run() async throws {
        let figures = try await TestHostLab.with("push", hosts: 2) { lab in
            try PushBench(lab: lab, command: self).measure()
        }
        figures.print(json: output.json)
    }
}
