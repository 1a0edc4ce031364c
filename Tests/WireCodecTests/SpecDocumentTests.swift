import Foundation
import TestSupport
import Testing
import WireCodec

/// Keeps `docs/wire-format.md` and the code in step: its golden vectors and constants are the ones tested here.
@Suite("docs/wire-format.md")
struct SpecDocumentTests {
    static let specURL = SpecDocument.url

    /// Rows of the form "| `name` | ... | `hex` |".
    static func goldenRows() throws -> [String: String] { try SpecDocument.goldenRows() }

    /// Whether a golden frame is of an application kind (`0x20...0x29`): the original apps' vectors, which
    /// BubblesAndCounter tests.
    static func isApplicationFrame(_ hex: String) -> Bool { SpecDocument.isApplicationFrame(hex) }

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
