import Foundation
import WireCodec

/// docs/wire-format.md as the tests read it: its golden rows, which the codec's tests and the apps' tests each check.
public enum SpecDocument {
    /// Where the spec is.
    public static let url = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/wire-format.md")

    /// Rows of the form "| `name` | ... | `hex` |": the hex of each golden vector, by name.
    public static func goldenRows() throws -> [String: String] {
        let text = try String(contentsOf: url, encoding: .utf8)
        var rows: [String: String] = [:]
        let pattern = try NSRegularExpression(
            pattern: #"^\| `([^`]+)` \|(?:.*\|)? `([0-9a-f]{2}(?: [0-9a-f]{2})*)` \|$"#, options: .anchorsMatchLines)
        for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            let name = String(text[Range(match.range(at: 1), in: text)!])
            rows[name] = String(text[Range(match.range(at: 2), in: text)!])
        }
        return rows
    }

    /// Whether a golden frame (its hex) is of an application kind (`0x20...0x29`): the original apps' vectors, which
    /// BubblesAndCounter's tests check.
    public static func isApplicationFrame(_ hex: String) -> Bool {
        let frame = hex.split(separator: " ").map { UInt8($0, radix: 16)! }
        guard let header = frame.firstIndex(where: { $0 & 0x80 == 0 }), header + 1 < frame.count else { return false }
        return MessageKind.applicationKinds.contains(frame[header + 1])
    }
}
