import Foundation
import TestSupport
import Testing

/// A real sessiond and an independent implementation of the protocol on Python's `noiseprotocol` complete the Noise
/// handshake both ways, with and without the secret, with ChaChaPoly and with AESGCM as their hellos choose, and
/// exchange sealed frames; on loopback, no test hosts.
@Suite(
    "Noise handshake against an independent implementation", .serialized,
    .disabled(if: PythonPeer.unavailableReason != nil, Comment(rawValue: PythonPeer.unavailableReason ?? ""))
)
struct NoiseInteropTests {
    final class Scratch {
        let path: String

        init() throws {
            path =
                FileManager.default.temporaryDirectory
                .appendingPathComponent("lansession-noise-\(UInt32.random(in: 0...UInt32.max))").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    /// A daemon on loopback with `extra` options and `LANSESSION_CIPHERS=ciphers` when given, once its control
    /// socket answers; and its port.
    func daemon(
        _ scratch: Scratch, _ name: String, _ extra: [String], ciphers: String? = nil
    ) async throws -> (HostProcess, Int) {
        let socket = "\(scratch.path)/\(name).sock"
        let environment = ciphers.map { ["env", "LANSESSION_CIPHERS=\($0)"] } ?? []
        let process = try HostProcess.local(
            environment + [
                Cluster.daemon, "--no-discovery", "--listen", "127.0.0.1", "--port", "0", "--name", name,
                "--session", "e2e", "--state-dir", "\(scratch.path)/state-\(name)", "--control", socket,
                "--log-level", "warning",
            ] + extra)
        var port = 0
        let up = await waitUntil(.seconds(10), every: .milliseconds(50)) {
            guard
                let result = try? TestLab.run([Cluster.client, "--control", socket, "--json", "status"], timeout: 10),
                result.status == 0,
                let status = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            else { return false }
            port = status["port"] as? Int ?? 0
            return true
        }
        #expect(up, "sessiond \(name) did not answer: \(process.stderr)")
        return (process, port)
    }

    func peer(_ arguments: [String]) throws -> [[String: Any]] {
        let result = try TestLab.run(["python3", PythonPeer.program] + arguments, timeout: 30)
        #expect(result.status == 0, "the Python peer exited \(result.status): \(result.stderr)")
        let events = PythonPeer.events(result.stdout)
        print("measured: python peer \(arguments.prefix(1)): \(PythonPeer.first("done", in: events) ?? [:])")
        return events
    }

    @Test(
        "the Python peer dials sessiond and is dialled by it: same handshake both ways, sealed pings answered",
        arguments: [false, true])
    func bothDirections(aes: Bool) async throws {
        // With AESGCM both offer it; otherwise the Python peer sends no cipher list, as an older release, and sessiond
        // offers what this CPU gives it.
        let ciphers = aes ? "aesgcm,chachapoly" : nil
        let peerCiphers = aes ? ["--ciphers", "aesgcm,chachapoly"] : []
        let cipher = aes ? "AESGCM" : "ChaChaPoly"
        let scratch = try Scratch()
        for secret in [false, true] {
            var extra = ["--admission", "open"]
            var peerExtra = peerCiphers
            if secret {
                let path = "\(scratch.path)/secret"
                try Data("an interop secret of 32 bytes...".utf8).write(to: URL(fileURLWithPath: path))
                chmod(path, 0o600)
                extra = ["--secret-file", path]
                peerExtra += ["--secret-file", path]
            }
            let (listening, port) = try await daemon(scratch, secret ? "psk" : "open", extra, ciphers: ciphers)
            defer { listening.stop() }
            // Python dials (Noise initiator).
            let dialled = try peer(["dial", "127.0.0.1", "\(port)", "--pings", "20", "--seconds", "10"] + peerExtra)
            let handshake = try #require(PythonPeer.first("handshake", in: dialled))
            let name = "Noise_\(secret ? "XXpsk3" : "XX")_25519_\(cipher)_SHA256"
            #expect(handshake["protocol"] as? String == name)
            #expect(PythonPeer.first("accepted", in: dialled) != nil, "no sealed accept: \(dialled)")
            #expect(PythonPeer.first("pongs", in: dialled)?["count"] as? Int == 20)
            // sessiond dials Python (Noise responder): a second daemon told to reach it.
            let listener = try HostProcess.local(
                ["python3", PythonPeer.program, "accept", "47391", "--pings", "20", "--hold", "1", "--seconds", "15"]
                    + peerExtra)
            defer { listener.stop() }
            try await Task.sleep(for: .milliseconds(300))
            let (dialler, _) = try await daemon(
                scratch, secret ? "psk-dialler" : "open-dialler", extra + ["--peer", "127.0.0.1:47391"],
                ciphers: ciphers)
            defer { dialler.stop() }
            let pongs = await listener.waitFor(timeout: 15) { $0["event"] as? String == "pongs" }
            let accepted = listener.events.first { $0["event"] as? String == "handshake" }
            #expect(accepted?["protocol"] as? String == name, "the dialled Python peer: \(listener.events)")
            #expect(pongs?["count"] as? Int == 20, "the dialled Python peer: \(listener.events)")
            #expect(listener.events.contains { $0["event"] as? String == "acceptedInvitation" })
        }
    }

    @Test("a wrong secret fails at message 3; a hello that does not encrypt is declined; nothing gets in")
    func refusals() async throws {
        let scratch = try Scratch()
        let path = "\(scratch.path)/secret"
        try Data("the right secret, 32 bytes long.".utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o600)
        let wrong = "\(scratch.path)/wrong"
        try Data("a wrong secret, also 32 bytes ..".utf8).write(to: URL(fileURLWithPath: wrong))
        chmod(wrong, 0o600)
        let (listening, port) = try await daemon(scratch, "psk", ["--secret-file", path])
        defer { listening.stop() }
        let guessed = try peer(["dial", "127.0.0.1", "\(port)", "--secret-file", wrong, "--seconds", "5"])
        #expect(PythonPeer.first("accepted", in: guessed) == nil)
        #expect(PythonPeer.first("closed", in: guessed) != nil)
        let plain = try peer(["dial", "127.0.0.1", "\(port)", "--seconds", "5"])
        // Each side refuses the other's hello (one admits by the secret, the other not), with authenticationFailed.
        #expect(
            PythonPeer.first("closed", in: plain)?["declineReason"] as? Int == 7
                || PythonPeer.first("helloRefused", in: plain) != nil, "\(plain)")
        #expect(PythonPeer.first("handshake", in: plain) == nil)
        let status = try TestLab.run(
            [Cluster.client, "--control", "\(scratch.path)/psk.sock", "--json", "status"], timeout: 10)
        let fields = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        #expect(fields?["peers"] as? Int == 0)
        #expect(fields?["failedHandshakes"] as? Int ?? 0 >= 2)

        // A peer that takes AESGCM alone and a sessiond limited to ChaChaPoly have no cipher in common: both refuse.
        let (chacha, chachaPort) = try await daemon(scratch, "chacha", ["--admission", "open"], ciphers: "chachapoly")
        defer { chacha.stop() }
        let aesOnly = try peer(["dial", "127.0.0.1", "\(chachaPort)", "--ciphers", "aesgcm", "--seconds", "5"])
        #expect(PythonPeer.first("handshake", in: aesOnly) == nil)
        #expect(
            PythonPeer.first("closed", in: aesOnly)?["declineReason"] as? Int == 7
                || PythonPeer.first("helloRefused", in: aesOnly)?["reason"] as? Int == 7, "\(aesOnly)")
    }
}
