import NIOCore
import WireCodec

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The file of ``DurableLog``: records appended and synced in batches, read back at the start. Blocking: its calls run
/// on a thread of the pool, one at a time (the log starts the next only once the last one came back).
///
/// A record is a little-endian `u32` length of its body, a `u32` FNV-1a checksum of the body, and the body: a type
/// byte, then for a message (1) the peer id, the durable id (`u64` little-endian each) and the payload; for an
/// acknowledgement (2) the peer id and the highest durable id it acknowledged; for the floor (3) the next durable id.
/// A record cut short or whose checksum does not match ends the file: what follows it (the tail of a batch that a
/// crash or a full disk interrupted) is cut off when the file is read.
final class DurableLogFile: @unchecked Sendable {
    enum RecordType: UInt8 {
        case message = 1
        case acknowledged = 2
        case floor = 3
    }

    /// What the file held when it was read.
    struct Contents {
        var messages: [(peer: PeerID, id: UInt64, payload: [UInt8])] = []
        var acknowledged: [PeerID: UInt64] = [:]
        var floor: UInt64 = 1
    }

    let path: String
    private var descriptor: Int32
    /// The file's length: where the next batch goes.
    private(set) var size: Int

    /// Opens (or creates, mode 0600) the file at `path`.
    init(path: String) throws(SessionError) {
        self.path = path
        descriptor = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ResourceFile.error("cannot open \(path)") }
        let end = lseek(descriptor, 0, SEEK_END)
        size = end > 0 ? Int(end) : 0
    }

    deinit {
        close(descriptor)
    }

    /// Reads the whole file, and cuts off a tail that is not a whole, intact record.
    func read() throws(SessionError) -> Contents {
        var bytes = [UInt8](repeating: 0, count: size)
        var offset = 0
        while offset < size {
            let count = bytes.withUnsafeMutableBytes {
                pread(descriptor, $0.baseAddress! + offset, size - offset, offset)
            }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw ResourceFile.error("cannot read \(path)") }
            offset += count
        }
        var contents = Contents()
        var position = 0
        while let body = Self.record(in: bytes, at: position) {
            Self.apply(body, of: bytes, to: &contents)
            position = body.upperBound
        }
        if position < size {
            guard ftruncate(descriptor, off_t(position)) == 0 else { throw ResourceFile.error("cannot cut \(path)") }
            size = position
        }
        return contents
    }

    /// Appends `bytes` (whole records) and syncs them; a failure cuts the file back to where it was.
    func append(_ bytes: [UInt8]) throws(SessionError) {
        var offset = 0
        var failure: SessionError?
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                failure = ResourceFile.error("cannot write \(path)")
                break
            }
            offset += written
        }
        if failure == nil, fdatasync(descriptor) != 0 { failure = ResourceFile.error("cannot sync \(path)") }
        if let failure {
            _ = ftruncate(descriptor, off_t(size))
            throw failure
        }
        size += bytes.count
    }

    /// Replaces the file with `bytes` (whole records), atomically.
    func replace(with bytes: [UInt8]) throws(SessionError) {
        try AtomicFile.write(bytes, to: path)
        let reopened = open(path, O_RDWR | O_APPEND | O_CLOEXEC)
        guard reopened >= 0 else { throw ResourceFile.error("cannot open \(path)") }
        close(descriptor)
        descriptor = reopened
        size = bytes.count
    }

    // MARK: - Records

    /// Appends a record of `type` with `fields` and `payload` to `bytes`.
    static func append(_ type: RecordType, _ fields: [UInt64], payload: ByteBufferView? = nil, to bytes: inout [UInt8])
    {
        let length = 1 + 8 * fields.count + (payload?.count ?? 0)
        let start = bytes.count
        bytes.append(contentsOf: [UInt8](repeating: 0, count: 8))
        bytes.append(type.rawValue)
        for field in fields { withUnsafeBytes(of: field.littleEndian) { bytes.append(contentsOf: $0) } }
        if let payload { bytes.append(contentsOf: payload) }
        let checksum = fnv1a(bytes[(start + 8)...])
        withUnsafeBytes(of: UInt32(length).littleEndian) { bytes.replaceSubrange(start..<(start + 4), with: $0) }
        withUnsafeBytes(of: checksum.littleEndian) { bytes.replaceSubrange((start + 4)..<(start + 8), with: $0) }
    }

    /// The body of the intact record at `position`, if there is one.
    private static func record(in bytes: [UInt8], at position: Int) -> Range<Int>? {
        guard bytes.count - position >= 9 else { return nil }
        let length = Int(u32(bytes, position))
        let body = (position + 8)..<(position + 8 + length)
        guard length >= 1, body.upperBound <= bytes.count, fnv1a(bytes[body]) == u32(bytes, position + 4) else {
            return nil
        }
        return body
    }

    /// What the record whose body is `body` says, applied to `contents`; a record of an unknown type or a wrong
    /// length says nothing.
    private static func apply(_ body: Range<Int>, of bytes: [UInt8], to contents: inout Contents) {
        func field(_ index: Int) -> UInt64 {
            let start = body.lowerBound + 1 + 8 * index
            return (0..<8).reduce(UInt64(0)) { value, byte in value | UInt64(bytes[start + byte]) << (8 * byte) }
        }
        switch RecordType(rawValue: bytes[body.lowerBound]) {
        case .message where body.count >= 17:
            contents.messages.append(
                (PeerID(field(0)), field(1), Array(bytes[(body.lowerBound + 17)..<body.upperBound])))
        case .acknowledged where body.count == 17:
            let peer = PeerID(field(0))
            contents.acknowledged[peer] = max(contents.acknowledged[peer] ?? 0, field(1))
        case .floor where body.count == 9:
            contents.floor = max(contents.floor, field(0))
        default:
            return
        }
    }

    private static func u32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { value, byte in value | UInt32(bytes[offset + byte]) << (8 * byte) }
    }

    /// FNV-1a, 32 bits: enough to tell a record cut short or overwritten from a whole one.
    static func fnv1a(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.reduce(UInt32(2_166_136_261)) { hash, byte in (hash ^ UInt32(byte)) &* 16_777_619 }
    }
}
