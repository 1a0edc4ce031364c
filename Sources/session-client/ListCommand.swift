import ArgumentParser
import SessionControl

/// A command whose request's result is a list, printed for people as a table: one row per element, or one sentence
/// when there is none.
protocol ListCommand: RequestCommand where Result == [Element] {
    /// The list's elements.
    associatedtype Element: Decodable

    /// The sentence printed for an empty list.
    static var whenEmpty: String { get }
    /// The table's headers.
    static var headers: [String] { get }
    /// The columns aligned to the right (numbers).
    static var rightAligned: Set<Int> { get }

    /// The elements in the table's order.
    static func sorted(_ elements: [Element]) -> [Element]

    /// An element's row, a cell per header.
    static func row(_ element: Element) -> [String]
}

extension ListCommand {
    static var rightAligned: Set<Int> { [] }

    static func sorted(_ elements: [Element]) -> [Element] { elements }

    func printText(_ result: [Element], daemon: Daemon) throws(ClientError) {
        guard !result.isEmpty else {
            Output.line(Self.whenEmpty)
            return
        }
        var table = TextTable(headers: Self.headers, rightAligned: Self.rightAligned)
        table.rows = Self.sorted(result).map(Self.row)
        Output.lines(table.render())
    }
}
