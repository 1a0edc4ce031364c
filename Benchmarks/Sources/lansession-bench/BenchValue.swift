import Foundation

/// One value of a ``BenchRow``: what JSON can hold, short of nesting.
enum BenchValue: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    case string(String)
    case integer(Int)
    case number(Double)
    case bool(Bool)
    case null

    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int) { self = .integer(value) }
    init(floatLiteral value: Double) { self = .number(value) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(nilLiteral: ()) { self = .null }

    /// A number rounded to `decimals` places, as the rows print it.
    static func rounded(_ value: Double, _ decimals: Int) -> BenchValue {
        let scale = pow(10, Double(decimals))
        return .number((value * scale).rounded() / scale)
    }

    /// The value as JSON text (numbers as Python's `json` writes them: the shortest text that reads back the same).
    var json: String {
        switch self {
        case .string(let text): return Self.quoted(text)
        case .integer(let value): return String(value)
        case .number(let value): return value.isFinite ? "\(value)" : "null"
        case .bool(let value): return value ? "true" : "false"
        case .null: return "null"
        }
    }

    /// The value as a number, when it is one.
    var double: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .number(let value): value
        default: nil
        }
    }

    /// `text` as a JSON string.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
