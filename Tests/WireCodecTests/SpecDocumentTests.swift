import Foundation
import Testing
import WireCodec

/// Keeps `docs/wire-format.md` and the code in step: its golden vectors and constants are the ones tested here.
@Suite("docs/wire-format.md")
struct SpecDocumentTests {
    static let specURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/wire-format.md")

    /// Rows of the form "| `name` | ... | `hex` |".
    static func goldenRows() throws -> [String: String] {
        let text = try String(contentsOf: specURL, encoding: .utf8)
        var rows: [String: String] = [:]
        let pattern = try NSRegularExpression(
            pattern: #"^\| `([^`]+)` \|(?:.*\|)? `([0-9a-f]{2}(?: [0-9a-f]{2})*)` \|$"#, options: .anchorsMatchLines)
        for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
            let name = String(text[Range(match.range(at: 1), in: text)!])
            rows[name] = String(text[Range(match.range(at: 2), in: text)!])
        }
        return rows
    }

    /// Whether a golden frame is of an application kind (`0x20...0x29`): the original apps' vectors, which
    /// BubblesAndCounter tests.
    static func isApplicationFrame(_ hex: String) -> Bool {
        let frame = bytes(hex: hex)
        guard let header = frame.firstIndex(where: { $0 & 0x80 == 0 }), header + 1 < frame.count else { return false }
        return MessageKind.applicationKinds.contains(frame[header + 1])
    }

    @Test("the spec lists exactly the tested golden vectors of the session's kinds, byte for byte")
    func goldenVectorsMatch() throws {
        let rows = try Self.goldenRows().filter { $0.key == "datagram" || !Self.isApplicationFrame($0.value) }
        var expected = Dictionary(uniqueKeysWithValues: GoldenVectors.frames.map { ($0.name, $0.hex) })
        expected["datagram"] = GoldenVectors.datagramHex
        #expect(rows == expected)
    }

    @Test("every kind number in the code appears in the spec's kind table")
    func kindTable() throws {
        let text = try String(contentsOf: Self.specURL, encoding: .utf8)
        for kind in MessageKind.sessionKinds {
            let number = String(kind.rawValue, radix: 16)
            let row = "| `0x\(number.count == 1 ? "0" + number : number)` | `\(kind)` |"
            #expect(text.contains(row), "missing \(row)")
        }
        for kind in MessageKind.applicationKinds {
            #expect(text.contains("| `0x\(String(kind, radix: 16))` | `"), "missing application kind \(kind)")
        }
    }

    @Test("every error code in the code appears in the spec's error table")
    func errorTable() throws {
        let text = try String(contentsOf: Self.specURL, encoding: .utf8)
        for code in WireError.Code.allCases {
            #expect(text.contains("| \(code.rawValue) | \(code) |"), "missing error \(code)")
        }
    }
}
