import ArgumentParser

/// A decimal number without sign or leading zero, 1 to 999999999, as the command line takes counts and seconds.
struct PositiveNumber: ExpressibleByArgument, Equatable {
    var value: Int

    init(_ value: Int) { self.value = value }

    init?(argument: String) {
        let bytes = argument.utf8
        guard let first = bytes.first, first != UInt8(ascii: "0"), bytes.count <= 9,
            bytes.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let value = Int(argument)
        else { return nil }
        self.value = value
    }

    var defaultValueDescription: String { "\(value)" }
}

/// A network of a lab: 1, or 2 with `--networks 2`.
enum NetworkNumber: Int, ExpressibleByArgument, CaseIterable {
    case one = 1
    case two = 2

    init?(argument: String) {
        switch argument {
        case "1": self = .one
        case "2": self = .two
        default: return nil
        }
    }

    static var allValueStrings: [String] { ["1", "2"] }
    var defaultValueDescription: String { "\(rawValue)" }
}
