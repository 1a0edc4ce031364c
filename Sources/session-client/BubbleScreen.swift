import SessionControl

/// Draws the live view: a fixed text field for the coordinate space, then one line per bubble and the help.
struct BubbleScreen {
    /// The field's size in cells.
    static let columns = 60
    static let rows = 20
    /// The coordinate space drawn, on both axes: 0...extent.
    static let extent = 300.0

    /// This peer's id.
    var me: String
    /// This peer's name.
    var name: String
    /// The selected bubble, as an index in the sorted list.
    var selected: Int
    /// What happened after the last key, if worth saying.
    var message: String?

    /// The screen's lines, escape sequences included.
    func lines(_ board: LiveBoard.Snapshot) -> [String] {
        var field = [[String]](repeating: [String](repeating: " ", count: Self.columns), count: Self.rows)
        for (index, bubble) in board.bubbles.enumerated() {
            let (column, row) = Self.cell(x: bubble.x, y: bubble.y)
            var glyph = index < 9 ? String(index + 1) : "*"
            if bubble.holder == me { glyph = "\u{1B}[1m" + glyph + "\u{1B}[22m" }
            if index == selected { glyph = "\u{1B}[7m" + glyph + "\u{1B}[27m" }
            field[row][column] = glyph
        }
        let border = "+" + String(repeating: "-", count: Self.columns) + "+"
        var lines = [" LanSession bubbles - you are \(name) (\(me))", border]
        lines += field.map { "|" + $0.joined() + "|" }
        lines.append(border)
        for (index, bubble) in board.bubbles.enumerated() {
            let marker = index == selected ? ">" : " "
            let position = "(\(Self.pad(bubble.x)), \(Self.pad(bubble.y)))"
            lines.append(" \(marker) [\(index + 1)] bubble \(bubble.view)  \(position)  \(holder(bubble, board))")
        }
        lines.append("")
        lines.append(" arrows: move the bubble you hold | space: pick up/drop | 1 2 3, Tab: select | q: quit")
        lines.append(" " + Self.clip(message ?? ""))
        lines.append(" " + Self.clip(board.lastEvent.map { "last event: " + $0 } ?? "waiting for events"))
        return lines
    }

    /// The field cell of a position; positions outside the space land on its edge.
    static func cell(x: Double, y: Double) -> (column: Int, row: Int) {
        func scale(_ value: Double, _ cells: Int) -> Int {
            guard value.isFinite else { return 0 }
            return min(max(Int((value / extent * Double(cells)).rounded(.down)), 0), cells - 1)
        }
        return (scale(x, columns), scale(y, rows))
    }

    /// Who holds `bubble`, in words.
    private func holder(_ bubble: BubbleResult, _ board: LiveBoard.Snapshot) -> String {
        guard let holder = bubble.holder else { return "free" }
        if holder == me { return "held by you" }
        return "held by " + (board.names[holder].map { "\($0) (\(holder))" } ?? holder)
    }

    /// A coordinate right-aligned on 3 columns.
    private static func pad(_ value: Double) -> String {
        let text = Output.coordinate(value)
        return String(repeating: " ", count: max(0, 3 - text.count)) + text
    }

    /// `text` cut to fit a line.
    private static func clip(_ text: String) -> String {
        text.count <= 100 ? text : String(text.prefix(99)) + "~"
    }
}
