import ArgumentParser
import Foundation

/// What every benchmark prints: a table for people, or with `--json` one JSON object per line and nothing else on
/// stdout (progress and build output go to stderr).
struct OutputOptions: ParsableArguments {
    @Flag(help: "One JSON object per line on stdout, nothing else.")
    var json = false

    /// Prints a row as it is measured: its JSON line with `--json`, else its line of `table`.
    func emit(_ row: BenchRow, in table: BenchTable) {
        Self.write(json ? row.jsonLine : table.line(row))
    }

    /// Prints the table's header (nothing with `--json`).
    func header(_ table: BenchTable) {
        guard !json else { return }
        Self.write(table.header)
    }

    /// Prints text for people (nothing with `--json`).
    func text(_ line: String) {
        guard !json else { return }
        Self.write(line)
    }

    /// One line on stdout at once (stdout may be a pipe read while the benchmark runs).
    static func write(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
