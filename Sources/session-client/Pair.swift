import ArgumentParser
import Foundation
import SessionControl

#if canImport(Glibc)
    import Glibc
#endif

/// `pair PEER_ID [--confirm CODE]`: asks a device to pair, or confirms the code both devices show.
struct Pair: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Asks a device to pair (both then show a code), or confirms the code with --confirm.",
        discussion: """
            Without --confirm, the code is shown once a link to the device is up; on a terminal it asks whether \
            the other device shows the same code and confirms or rejects. Compare the code on both screens: a \
            device in the middle makes them differ.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The device's peer id (16 hex digits).")
    var peerID: String

    @Option(help: "Confirm the pairing: the 6-digit code this device shows, after checking the other shows the same.")
    var confirm: String?

    static func validate(_ peerID: String) throws {
        guard peerID.utf8.count == 16, peerID.allSatisfy(\.isHexDigit) else {
            throw ValidationError("PEER_ID must be 16 hex digits (got \(peerID.debugDescription))")
        }
    }

    func validate() throws {
        try Self.validate(peerID)
        if let confirm, confirm.utf8.count != 6 || !confirm.allSatisfy(\.isNumber) {
            throw ValidationError("--confirm needs the 6-digit code (got \(confirm.debugDescription))")
        }
    }

    /// The device's peer id (checked by ``validate()``).
    var peer: UInt64 { ControlCommand.peerID(hex: peerID) ?? 0 }

    func run() throws {
        let daemon = try global.connect()
        if let confirm {
            let reply = try daemon.call(ControlCommand.pair(peer: peer, code: confirm))
            if global.json { return Output.line(reply.rawResult) }
            let result = try reply.decode(PairResult.self)
            Output.line(
                result.paired
                    ? "paired with \(peerID)" : "confirmed here; paired once \(peerID) confirms the same code too")
            return
        }
        var result = try daemon.call(ControlCommand.pair(peer: peer)).decode(PairResult.self)
        // A dial goes first when no link is up: the code comes once the handshake is done.
        let deadline = Date().addingTimeInterval(10)
        while result.pairing == nil, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
            let pending = try daemon.call(ControlCommand.pairings).decode([PairingResult].self)
            result.pairing = pending.first { $0.peerID == peerID.lowercased() }
        }
        guard let pairing = result.pairing else {
            throw ClientError(.refused, "no link to \(peerID) came up within 10 s; is it running and discovered?")
        }
        if global.json {
            let data = try JSONEncoder().encode(result)
            return Output.line(String(decoding: data, as: UTF8.self))
        }
        Output.line("pairing with \(pairing.name) (\(pairing.peerID), \(pairing.fingerprint)): code \(pairing.code)")
        guard isatty(STDIN_FILENO) == 1 else {
            Output.line("confirm on both devices: session-client pair \(pairing.peerID) --confirm \(pairing.code)")
            return
        }
        FileHandle.standardOutput.write(Data("Does the other device show \(pairing.code)? [y/N] ".utf8))
        let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased()
        if answer == "y" || answer == "yes" {
            let confirmed = try daemon.call(ControlCommand.pair(peer: peer, code: pairing.code))
                .decode(PairResult.self)
            Output.line(
                confirmed.paired ? "paired with \(peerID)" : "confirmed here; paired once the other device confirms")
        } else {
            _ = try daemon.call(ControlCommand.unpair(peer: peer))
            Output.line("pairing rejected")
        }
    }
}
