import Foundation
import Testing

/// Keeps README's library examples compiled: every Swift block of README.md is the code of a program under
/// Examples/Sources/Readme, which scripts/test builds (the Examples package), line for line.
@Suite("README.md's Swift examples")
struct ReadmeExampleTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The lines of each fenced Swift block of README.md.
    static func readmeBlocks() throws -> [[String]] {
        let text = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        var blocks: [[String]] = []
        var block: [String]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if block == nil, line == "```swift" {
                block = []
            } else if let lines = block, line == "```" {
                blocks.append(lines)
                block = nil
            } else {
                block?.append(line)
            }
        }
        return blocks
    }

    /// The programs README's blocks are taken from.
    static func programs() throws -> [String: [String]] {
        let directory = root.appendingPathComponent("Examples/Sources/Readme")
        var programs: [String: [String]] = [:]
        for name in try FileManager.default.subpathsOfDirectory(atPath: directory.path) where name.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
            programs[name] = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        }
        return programs
    }

    /// Whether `block` is a run of `lines`, each indented alike (a program may hold it in an `#if`).
    static func contains(_ lines: [String], _ block: [String]) -> Bool {
        guard let first = block.first, !first.isEmpty, block.count <= lines.count else { return false }
        for start in 0...(lines.count - block.count) where lines[start].hasSuffix(first) {
            let indent = String(lines[start].dropLast(first.count))
            guard indent.allSatisfy({ $0 == " " }) else { continue }
            let matches = block.indices.allSatisfy { index in
                let line = lines[start + index]
                return block[index].isEmpty ? line.allSatisfy { $0 == " " } : line == indent + block[index]
            }
            if matches { return true }
        }
        return false
    }

    @Test("README has Swift examples, and each is the code of a program under Examples/Sources/Readme")
    func examplesAreCompiled() throws {
        let blocks = try Self.readmeBlocks()
        let programs = try Self.programs()
        #expect(blocks.count >= 2)
        for block in blocks {
            #expect(
                programs.values.contains { Self.contains($0, block) },
                "README's block starting \"\(block.first ?? "")\" is in no program of Examples/Sources/Readme")
        }
    }

    @Test("a block is found only where it is, line for line and indented alike")
    func matching() {
        let program = ["#if X", "    let a = 1", "", "    print(a)", "#endif"]
        #expect(Self.contains(program, ["let a = 1", "", "print(a)"]))
        #expect(!Self.contains(program, ["let a = 2", "", "print(a)"]))
        #expect(!Self.contains(program, ["let a = 1", "print(a)"]))
        #expect(!Self.contains(["  let a = 1", "    print(a)"], ["let a = 1", "print(a)"]))
    }
}
