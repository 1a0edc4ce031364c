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

    /// Builds products of the root package in release mode (build output to stderr) and returns its bin directory.
    static func releaseBuild(_ products: [String]) throws(SubprocessError) -> String {
        for product in products {
            try Subprocess.run(
                ["swift", "build", "-c", "release", "--package-path", root, "--product", product],
                stdout: .standardError)
        }
        return try Subprocess.output(["swift", "build", "-c", "release", "--package-path", root, "--show-bin-path"])
    }

    /// Says so on stderr, as every progress note of a benchmark (stdout holds only its rows).
    static func note(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
