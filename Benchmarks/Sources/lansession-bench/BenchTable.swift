import Foundation

/// The table a benchmark prints without `--json`: fixed-width columns, each showing one value of a ``BenchRow``.
struct BenchTable: Sendable {
    /// How a column shows its value.
    enum Format: Sendable {
        /// As it is, left-aligned.
        case text
        /// A number with this many decimals, right-aligned.
        case decimals(Int)
    }

    struct Column: Sendable {
        var title: String
        var key: String
        var width: Int
        var format: Format

        init(_ title: String, key: String, width: Int, _ format: Format = .decimals(1)) {
            self.title = title
            self.key = key
            self.width = width
            self.format = format
        }
    }

    var columns: [Column]

    init(_ columns: [Column]) { self.columns = columns }

    /// The titles, aligned as the values below them.
    var header: String {
        columns.map { Self.align($0.title, $0) }.joined(separator: " ")
    }

    /// One row's line.
    func line(_ row: BenchRow) -> String {
        columns.map { column in
            let text: String
            switch (column.format, row[column.key]) {
            case (.decimals(let places), .some(let value)) where value.double != nil:
                text = String(format: "%.\(places)f", value.double!)
            case (_, .some(.string(let value))): text = value
            case (_, .some(let value)): text = value.json
            case (_, .none): text = "-"
            }
            return Self.align(text, column)
        }.joined(separator: " ")
    }

    private static func align(_ text: String, _ column: Column) -> String {
        let padding = String(repeating: " ", count: max(0, column.width - text.count))
        if case .text = column.format { return text + padding }
        return padding + text
    }
}
