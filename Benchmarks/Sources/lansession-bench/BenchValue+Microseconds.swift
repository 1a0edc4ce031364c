/// Figures the daemon reports as numbers that JSON may hold whole.
extension BenchValue {
    /// A daemon's figure as it wrote it: a whole number without decimals (its JSON encoder drops them), else the
    /// number; null when missing.
    static func microseconds(_ value: Double?) -> BenchValue {
        guard let value else { return .null }
        if value == value.rounded(), abs(value) < 1e15 { return .integer(Int(value)) }
        return .number(value)
    }
}
