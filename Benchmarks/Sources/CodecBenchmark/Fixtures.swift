import BubblesAndCounter
import WireCodec

/// The values every codec encodes: one bubble move, one counter press and one hello.
enum Fixtures {
    /// A bubble move, as sent many times a second while dragging.
    static let move = Move(view: 1, x: 123.5, y: -45.25, sequence: 4242)
    /// A single counter press.
    static let incrementDelta: UInt16 = 1
    /// A typical hello. The peer id stays below `Int64.max` so that property lists can hold it as an integer.
    static let hello = Hello(
        protocolVersion: Wire.protocolVersion, peerID: PeerID(0x0123_4567_89AB_CDEF),
        incarnation: 0x0102_0304_0506_0708,
        capabilities: [.datagrams, .resume], datagramPort: 47_000, displayName: "Alice's iPhone", sessionName: "Bubbles"
    )
}

extension Move: Checksummed {
    var checksum: UInt64 {
        UInt64(view) &+ UInt64(x.bitPattern) &+ UInt64(y.bitPattern) &+ UInt64(sequence)
    }
}

extension Hello: Checksummed {
    var checksum: UInt64 {
        UInt64(protocolVersion) &+ peerID.rawValue &+ incarnation &+ UInt64(capabilities.rawValue)
            &+ UInt64(datagramPort) &+ displayName.checksum &+ sessionName.checksum
    }
}
