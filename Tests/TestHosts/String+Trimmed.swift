extension StringProtocol {
    /// The text without white space (spaces, tabs, newlines) at either end.
    var trimmed: String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
