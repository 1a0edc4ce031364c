import Foundation
import WireCodec

/// `NSKeyedArchiver` of dictionaries shaped like the ones the original iPhone app sent, and `NSKeyedUnarchiver` back.
///
/// The app archived an `NSDictionary` with a `command` number and the command's fields. The command numbers here
/// are illustrative; small `NSNumber`s archive to the same size whatever their value.
enum KeyedArchiverCodec {
    static let name = "nskeyedarchiver"

    /// The app's command numbers, as used here.
    enum Command: Int {
        case handshake = 0
        case move = 2
        case increment = 3
    }

    static func cases() -> [BenchCase] {
        let move = Fixtures.move
        let increment = Fixtures.incrementDelta
        let hello = Fixtures.hello
        return [
            benchCase(
                "move",
                expected: ArchivedMove(
                    command: Command.move.rawValue, view: Int(move.view), x: Double(move.x), y: Double(move.y)),
                // The app used NSValue(CGPoint:), which only UIKit has. NSValue(point:) is its Foundation twin: on
                // Linux it archives as an NSValue whose NS.pointval is the string "{x, y}", and unarchives to
                // the same point, so no NSString stand-in is needed.
                root: [
                    "command": NSNumber(value: Command.move.rawValue),
                    "viewNumber": NSNumber(value: move.view),
                    "newCenter": NSValue(point: NSPoint(x: CGFloat(move.x), y: CGFloat(move.y))),
                ]),
            benchCase(
                "increment",
                expected: ArchivedIncrement(command: Command.increment.rawValue, count: Int(increment)),
                root: ["command": NSNumber(value: Command.increment.rawValue), "count": NSNumber(value: increment)]),
            benchCase(
                "hello",
                expected: ArchivedHandshake(command: Command.handshake.rawValue, peerName: hello.displayName),
                root: [
                    "command": NSNumber(value: Command.handshake.rawValue),
                    "peerName": NSString(string: hello.displayName),
                ]),
        ]
    }

    /// Every class the archives contain.
    static let allowedClasses: [AnyClass] = [
        NSDictionary.self, NSNumber.self, NSString.self, NSValue.self,
    ]

    static func benchCase<T: ArchivedCommand>(_ label: String, expected: T, root: [String: NSObject]) -> BenchCase {
        let dictionary = opaque(NSDictionary(dictionary: root))
        return DataCodec.benchCase(
            codec: name, message: label, expected: expected,
            encode: { try NSKeyedArchiver.archivedData(withRootObject: dictionary, requiringSecureCoding: false) },
            decode: { data in
                let object = try NSKeyedUnarchiver.unarchivedObject(ofClasses: allowedClasses, from: data)
                guard let dictionary = object as? NSDictionary, let command = T(dictionary) else {
                    throw CodecError.unexpectedShape("\(type(of: object))")
                }
                return command
            })
    }
}

/// A command read back from an unarchived dictionary.
protocol ArchivedCommand: Equatable, Checksummed {
    init?(_ dictionary: NSDictionary)
}

/// The app's move command: which bubble and its new centre.
struct ArchivedMove: ArchivedCommand {
    var command: Int
    var view: Int
    var x: Double
    var y: Double

    init(command: Int, view: Int, x: Double, y: Double) {
        self.command = command
        self.view = view
        self.x = x
        self.y = y
    }

    init?(_ dictionary: NSDictionary) {
        guard let command = dictionary.object(forKey: "command") as? NSNumber,
            let view = dictionary.object(forKey: "viewNumber") as? NSNumber,
            let center = dictionary.object(forKey: "newCenter") as? NSValue
        else { return nil }
        let point = center.pointValue
        self.init(command: command.intValue, view: view.intValue, x: Double(point.x), y: Double(point.y))
    }

    var checksum: UInt64 {
        UInt64(command) &+ UInt64(view) &+ x.bitPattern &+ y.bitPattern
    }
}

/// The app's counter command: how many presses.
struct ArchivedIncrement: ArchivedCommand {
    var command: Int
    var count: Int

    init(command: Int, count: Int) {
        self.command = command
        self.count = count
    }

    init?(_ dictionary: NSDictionary) {
        guard let command = dictionary.object(forKey: "command") as? NSNumber,
            let count = dictionary.object(forKey: "count") as? NSNumber
        else { return nil }
        self.init(command: command.intValue, count: count.intValue)
    }

    var checksum: UInt64 { UInt64(command) &+ UInt64(count) }
}

/// The app's greeting: the sender's name, its only equivalent of a hello.
struct ArchivedHandshake: ArchivedCommand {
    var command: Int
    var peerName: String

    init(command: Int, peerName: String) {
        self.command = command
        self.peerName = peerName
    }

    init?(_ dictionary: NSDictionary) {
        guard let command = dictionary.object(forKey: "command") as? NSNumber,
            let peerName = dictionary.object(forKey: "peerName") as? String
        else { return nil }
        self.init(command: command.intValue, peerName: peerName)
    }

    var checksum: UInt64 { UInt64(command) &+ peerName.checksum }
}
