import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Writes to the standard streams without buffering, so every line leaves at once, even through a pipe.
enum Output {
    /// Writes `text` and a newline to stdout.
    static func line(_ text: String) { write(text + "\n", to: STDOUT_FILENO) }

    /// Writes each line to stdout.
    static func lines(_ texts: [String]) { write(texts.map { $0 + "\n" }.joined(), to: STDOUT_FILENO) }

    /// Writes `text` and a newline to stderr.
    static func error(_ text: String) { write(text + "\n", to: STDERR_FILENO) }

    /// Writes all of `text` to `descriptor`.
    static func write(_ text: String, to descriptor: Int32) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { raw in
                Glibc.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
            }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return }
            offset += count
        }
    }

    /// `text` on one line: line breaks and the blanks around them become single spaces.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
            .joined(separator: " ")
    }

    /// A coordinate without noise: `50` rather than `50.0`, one decimal otherwise.
    static func coordinate(_ value: Double) -> String {
        guard value.isFinite else { return String(describing: value) }
        if value == value.rounded() && abs(value) < 1e15 { return String(Int64(value)) }
        return String(format: "%.1f", value)
    }

    /// The original app's wording of a count.
    static func times(_ count: UInt64) -> String { "\(count) times" }
}

/// A plain text table: a header row, then rows, each column as wide as its widest cell.
struct TextTable {
    var headers: [String]
    var rows: [[String]] = []
    /// Columns aligned to the right (numbers).
    var rightAligned: Set<Int> = []

    /// The table's lines, without trailing blanks.
    func render() -> [String] {
        let all = [headers] + rows
        let columns = all.map(\.count).max() ?? 0
        var widths = [Int](repeating: 0, count: columns)
        for row in all {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        return all.map { row in
            var cells: [String] = []
            for (column, cell) in row.enumerated() {
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                cells.append(rightAligned.contains(column) ? padding + cell : cell + padding)
            }
            let line = cells.joined(separator: "  ")
            return String(line.reversed().drop(while: { $0 == " " }).reversed())
        }
    }
}
