import ArgumentParser
import Foundation
import SessionControl

/// `invitations`: the invitations waiting for an answer.
struct Invitations: ListCommand {
    static let configuration = CommandConfiguration(abstract: "Lists the invitations waiting for an answer.")

    @OptionGroup var global: GlobalOptions

    func request() -> ControlCommand { ControlCommand.invitations }

    static let whenEmpty = "no invitations waiting"
    static let headers = ["ID", "PEER ID", "NAME", "CONTEXT"]
    static let rightAligned: Set<Int> = [0]

    static func sorted(_ invitations: [InvitationResult]) -> [InvitationResult] {
        invitations.sorted { $0.id < $1.id }
    }

    static func row(_ invitation: InvitationResult) -> [String] {
        [String(invitation.id), invitation.peerID, invitation.name, context(invitation.context)]
    }

    /// An invitation number: a whole number, not negative.
    static func validate(_ id: CommandLineNumber<UInt64>) throws {
        guard id.parsed != nil else {
            throw ValidationError("ID must be an invitation's number, 0 or more (got \(id.text.debugDescription))")
        }
    }

    /// Throws, listing the invitations waiting, when `id` is not one of them.
    static func checkPending(_ id: CommandLineNumber<UInt64>, daemon: Daemon) throws(ClientError) {
        let pending = try daemon.call(ControlCommand.invitations).decode([InvitationResult].self)
        let ids = pending.map(\.id).sorted()
        guard let number = id.parsed, !ids.contains(number) else { return }
        throw ClientError(
            .refused,
            "no invitation \(number); "
                + (ids.isEmpty ? "none pending" : "pending: " + ids.map(String.init).joined(separator: ", ")))
    }

    /// An invitation's context for people: quoted text when it is printable UTF-8, its size and base64 otherwise.
    static func context(_ base64: String) -> String {
        guard let data = Data(base64Encoded: base64) else { return base64.isEmpty ? "-" : "base64 " + base64 }
        if data.isEmpty { return "-" }
        if let text = String(data: data, encoding: .utf8),
            text.unicodeScalars.allSatisfy({ !CharacterSet.controlCharacters.contains($0) })
        {
            return "\"\(text)\""
        }
        return "\(data.count) bytes, base64 \(base64)"
    }
}
