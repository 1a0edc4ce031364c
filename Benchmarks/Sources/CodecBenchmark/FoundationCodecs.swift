import Foundation
import WireCodec

/// Benchmark cases for codecs that produce `Data`: encode and decode run through closures.
///
/// The closure call costs a nanosecond or two, which is noise next to these codecs' own cost.
enum DataCodec {
    static func benchCase<T: Equatable & Checksummed>(
        codec: String, message: String, expected: T, encode: @escaping () throws -> Data,
        decode: @escaping (Data) throws -> T
    ) -> BenchCase {
        let data: Data
        do {
            data = try encode()
            verify(try decode(data), equals: expected, codec, message)
        } catch {
            fatalError("\(codec) \(message): \(error)")
        }

        return BenchCase(
            codec: codec, message: message, bytes: data.count,
            encode: { iterations in
                var sum: UInt64 = 0
                for _ in 0..<iterations {
                    let encoded = try! encode()
                    sum &+= UInt64(encoded.count) &+ UInt64(encoded.last ?? 0)
                }
                return sum
            },
            decode: { iterations in
                var sum: UInt64 = 0
                for _ in 0..<iterations {
                    sum &+= try! decode(data).checksum
                }
                return sum
            })
    }
}

/// A move as a plain record, for the JSON and property-list codecs.
struct MoveRecord: Codable, Equatable, Checksummed {
    var view: UInt8
    var x: Float
    var y: Float
    var sequence: UInt16

    var checksum: UInt64 {
        UInt64(view) &+ UInt64(x.bitPattern) &+ UInt64(y.bitPattern) &+ UInt64(sequence)
    }
}

/// A counter increment as a plain record, for the JSON and property-list codecs.
struct IncrementRecord: Codable, Equatable, Checksummed {
    var delta: UInt16

    var checksum: UInt64 { UInt64(delta) }
}

/// A hello (without extensions) as a plain record, for the JSON and property-list codecs.
struct HelloRecord: Codable, Equatable, Checksummed {
    var protocolVersion: UInt32
    var peerID: UInt64
    var incarnation: UInt64
    var capabilities: UInt32
    var datagramPort: UInt16
    var displayName: String
    var sessionName: String

    var checksum: UInt64 {
        UInt64(protocolVersion) &+ peerID &+ incarnation &+ UInt64(capabilities) &+ UInt64(datagramPort)
            &+ displayName.checksum &+ sessionName.checksum
    }
}

/// The fixtures as records.
enum Records {
    static let move = MoveRecord(
        view: Fixtures.move.view, x: Fixtures.move.x, y: Fixtures.move.y, sequence: Fixtures.move.sequence)
    static let increment = IncrementRecord(delta: Fixtures.incrementDelta)
    static let hello = HelloRecord(
        protocolVersion: Fixtures.hello.protocolVersion, peerID: Fixtures.hello.peerID.rawValue,
        incarnation: Fixtures.hello.incarnation, capabilities: Fixtures.hello.capabilities.rawValue,
        datagramPort: Fixtures.hello.datagramPort, displayName: Fixtures.hello.displayName,
        sessionName: Fixtures.hello.sessionName)
}

/// Foundation's `JSONEncoder` and `JSONDecoder` on Codable records, one encoder and decoder reused per case.
enum JSONCodec {
    static let name = "json"

    static func cases() -> [BenchCase] {
        [benchCase("move", Records.move), benchCase("increment", Records.increment), benchCase("hello", Records.hello)]
    }

    static func benchCase<T: Codable & Equatable & Checksummed>(_ label: String, _ original: T) -> BenchCase {
        let value = opaque(original)
        let encoder = JSONEncoder()
        let decoder = JSONDecoder()
        return DataCodec.benchCase(
            codec: name, message: label, expected: original,
            encode: { try encoder.encode(value) },
            decode: { try decoder.decode(T.self, from: $0) })
    }
}

/// A record that converts to and from a property-list dictionary.
protocol PropertyListRecord: Equatable, Checksummed {
    var propertyList: [String: Any] { get }
    init?(propertyList: [String: Any])
}

extension MoveRecord: PropertyListRecord {
    var propertyList: [String: Any] {
        ["view": Int(view), "x": x, "y": y, "sequence": Int(sequence)]
    }

    init?(propertyList: [String: Any]) {
        guard let view = propertyList["view"] as? UInt8, let x = propertyList["x"] as? Float,
            let y = propertyList["y"] as? Float, let sequence = propertyList["sequence"] as? UInt16
        else { return nil }
        self.init(view: view, x: x, y: y, sequence: sequence)
    }
}

extension IncrementRecord: PropertyListRecord {
    var propertyList: [String: Any] {
        ["delta": Int(delta)]
    }

    init?(propertyList: [String: Any]) {
        guard let delta = propertyList["delta"] as? UInt16 else { return nil }
        self.init(delta: delta)
    }
}

extension HelloRecord: PropertyListRecord {
    var propertyList: [String: Any] {
        [
            "protocolVersion": Int(protocolVersion), "peerID": Int(peerID), "incarnation": Int(incarnation),
            "capabilities": Int(capabilities), "datagramPort": Int(datagramPort), "displayName": displayName,
            "sessionName": sessionName,
        ]
    }

    init?(propertyList: [String: Any]) {
        guard let protocolVersion = propertyList["protocolVersion"] as? UInt32,
            let peerID = propertyList["peerID"] as? UInt64,
            let incarnation = propertyList["incarnation"] as? UInt64,
            let capabilities = propertyList["capabilities"] as? UInt32,
            let datagramPort = propertyList["datagramPort"] as? UInt16,
            let displayName = propertyList["displayName"] as? String,
            let sessionName = propertyList["sessionName"] as? String
        else { return nil }
        self.init(
            protocolVersion: protocolVersion, peerID: peerID, incarnation: incarnation, capabilities: capabilities,
            datagramPort: datagramPort, displayName: displayName, sessionName: sessionName)
    }
}

/// `PropertyListSerialization` in the binary format, of a dictionary built from the record and back.
enum PropertyListCodec {
    static let name = "plist"

    static func cases() -> [BenchCase] {
        [benchCase("move", Records.move), benchCase("increment", Records.increment), benchCase("hello", Records.hello)]
    }

    static func benchCase<T: PropertyListRecord>(_ label: String, _ original: T) -> BenchCase {
        let value = opaque(original)
        return DataCodec.benchCase(
            codec: name, message: label, expected: original,
            encode: {
                try PropertyListSerialization.data(fromPropertyList: value.propertyList, format: .binary, options: 0)
            },
            decode: { data in
                let object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
                guard let dictionary = object as? [String: Any], let record = T(propertyList: dictionary) else {
                    throw CodecError.unexpectedShape("\(type(of: object))")
                }
                return record
            })
    }
}

/// A decoded value that does not have the shape that was encoded.
enum CodecError: Error {
    case unexpectedShape(String)
}
