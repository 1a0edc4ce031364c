/// One measured row: named values in a fixed order, printed as one JSON object on one line (`--json`) or as a line
/// of a ``BenchTable``.
struct BenchRow: Sendable, Equatable {
    /// The values, in the order they print.
    private(set) var fields: [(key: String, value: BenchValue)]

    init(_ fields: KeyValuePairs<String, BenchValue>) {
        self.fields = fields.map { (key: $0.key, value: $0.value) }
    }

    /// A value by name; setting one that is not there adds it at the end.
    subscript(key: String) -> BenchValue? {
        get { fields.first { $0.key == key }?.value }
        set {
            if let index = fields.firstIndex(where: { $0.key == key }) {
                if let newValue { fields[index].value = newValue } else { fields.remove(at: index) }
            } else if let newValue {
                fields.append((key: key, value: newValue))
            }
        }
    }

    /// A number by name (0 when missing: for tables).
    func number(_ key: String) -> Double { self[key]?.double ?? 0 }

    /// The row as one JSON object, members in order, separated as Python's `json.dumps` does.
    var jsonLine: String {
        "{" + fields.map { BenchValue.quoted($0.key) + ": " + $0.value.json }.joined(separator: ", ") + "}"
    }

    static func == (lhs: BenchRow, rhs: BenchRow) -> Bool {
        lhs.fields.map(\.key) == rhs.fields.map(\.key) && lhs.fields.map(\.value) == rhs.fields.map(\.value)
    }
}
