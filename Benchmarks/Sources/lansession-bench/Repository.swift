import Foundation

/// The checkout this tool belongs to: where scripts/testnet and the root package are.
enum Repository {
    /// The nearest directory holding scripts/testnet: above the current directory, else above this executable
    /// (Benchmarks/.build/…/lansession-bench).
    static let root: String = {
        let fileManager = FileManager.default
        let starts = [
            fileManager.currentDirectoryPath,
            URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().path,
        ]
        for start in starts {
            var directory = URL(fileURLWithPath: start)
            while directory.path != "/" {
                if fileManager.isExecutableFile(atPath: directory.appendingPathComponent("scripts/testnet").path) {
                    return directory.path
                }
                directory.deleteLastPathComponent()
            }
        }
        return fileManager.currentDirectoryPath
    }()

    /// A path inside the checkout.
    static func path(_ relative: String) -> String { root + "/" + relative }

    /// Builds products of the root package (sessiond, session-client) in release mode, as products of the Benchmarks
    /// package that depends on it: one build folder, whose LanSession modules this tool's build has compiled already.
    /// Build output goes to stderr; returns the folder of the binaries.
    static func releaseBuild(_ products: [String]) throws(SubprocessError) -> String {
        let package = path("Benchmarks")
        for product in products {
            try Subprocess.run(
                ["swift", "build", "-c", "release", "--package-path", package, "--product", product],
                stdout: .standardError)
        }
        return try Subprocess.output(["swift", "build", "-c", "release", "--package-path", package, "--show-bin-path"])
    }

    /// A new empty directory for a benchmark's files, in the temporary directory; the benchmark removes it.
    static func scratchDirectory(_ name: String) throws -> String {
        let template = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(name).XXXXXX").path
        var bytes = Array(template.utf8CString)
        guard mkdtemp(&bytes) != nil else { throw BenchFailure("\(name): cannot make a scratch directory") }
        return String(decoding: bytes.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Says so on stderr, as every progress note of a benchmark (stdout holds only its rows).
    static func note(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
