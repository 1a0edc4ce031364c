import SwiftProtobuf
import WireCodec

/// swift-protobuf binary format of the messages in `Protos/bench.proto`.
enum ProtobufCodec {
    static let name = "protobuf"

    static func cases() -> [BenchCase] {
        var move = Lansession_Bench_Move()
        move.view = UInt32(Fixtures.move.view)
        move.x = Fixtures.move.x
        move.y = Fixtures.move.y
        move.sequence = UInt32(Fixtures.move.sequence)

        var increment = Lansession_Bench_CounterIncrement()
        increment.delta = UInt32(Fixtures.incrementDelta)

        var hello = Lansession_Bench_Hello()
        hello.protocolVersion = Fixtures.hello.protocolVersion
        hello.peerID = Fixtures.hello.peerID.rawValue
        hello.capabilities = Fixtures.hello.capabilities.rawValue
        hello.displayName = Fixtures.hello.displayName
        hello.sessionName = Fixtures.hello.sessionName
        hello.incarnation = Fixtures.hello.incarnation
        hello.datagramPort = UInt32(Fixtures.hello.datagramPort)

        return [benchCase("move", move), benchCase("increment", increment), benchCase("hello", hello)]
    }

    static func benchCase<M: SwiftProtobuf.Message & Equatable & Checksummed>(
        _ label: String, _ original: M
    ) -> BenchCase {
        let message = opaque(original)
        let bytes: [UInt8]
        do {
            bytes = try message.serializedBytes()
            verify(try M(serializedBytes: bytes), equals: original, name, label)
        } catch {
            fatalError("\(name) \(label): \(error)")
        }

        return BenchCase(
            codec: name, message: label, bytes: bytes.count,
            encode: { iterations in
                var sum: UInt64 = 0
                for _ in 0..<iterations {
                    let encoded: [UInt8] = try! message.serializedBytes()
                    sum &+= UInt64(encoded.count) &+ UInt64(encoded[encoded.count - 1])
                }
                return sum
            },
            decode: { iterations in
                var sum: UInt64 = 0
                for _ in 0..<iterations {
                    sum &+= try! M(serializedBytes: bytes).checksum
                }
                return sum
            })
    }
}

extension Lansession_Bench_Move: Checksummed {
    var checksum: UInt64 {
        UInt64(view) &+ UInt64(x.bitPattern) &+ UInt64(y.bitPattern) &+ UInt64(sequence)
    }
}

extension Lansession_Bench_CounterIncrement: Checksummed {
    var checksum: UInt64 { UInt64(delta) }
}

extension Lansession_Bench_Hello: Checksummed {
    var checksum: UInt64 {
        UInt64(protocolVersion) &+ peerID &+ incarnation &+ UInt64(capabilities) &+ UInt64(datagramPort)
            &+ displayName.checksum &+ sessionName.checksum
    }
}
