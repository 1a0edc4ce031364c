import Logging
import WireCodec

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Durable messages on the receiver's side (docs/wire-format.md, section 10.5): per sender peer id, the highest
/// durable id delivered, so that a copy its sender resends after a restart is dropped.
///
/// With a directory, each is also written in place in the file `durable-received` (16 bytes per sender: its peer id and
/// the id, little-endian) before the message is delivered, without a sync: the kernel keeps it through a crash of
/// this process, so that a receiver restarted after a kill -9 drops the copies too; a power cut may lose the last ones.
final class DurableReceipts {
    static let fileName = "durable-received"

    private let logger: Logger
    private var highest: [PeerID: UInt64] = [:]
    /// Each sender's place in the file (in records of 16 bytes).
    private var slots: [PeerID: Int] = [:]
    private var descriptor: Int32 = -1

    init(directory: String?, logger: Logger) {
        self.logger = logger
        guard let directory else { return }
        let path = directory + "/" + Self.fileName
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            logger.debug("durable receipts kept in memory only: cannot open \(path) (errno \(errno))")
            return
        }
        var record = [UInt8](repeating: 0, count: 16)
        var slot = 0
        while record.withUnsafeMutableBytes({ pread(descriptor, $0.baseAddress!, 16, off_t(slot * 16)) }) == 16 {
            let peer = PeerID(Self.u64(record, 0))
            highest[peer] = max(highest[peer] ?? 0, Self.u64(record, 8))
            slots[peer] = slot
            slot += 1
        }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Whether the durable message `id` from `peer` is to be delivered: true once per id, for ids that only grow.
    func take(_ id: UInt64, from peer: PeerID) -> Bool {
        guard id > highest[peer] ?? 0 else { return false }
        highest[peer] = id
        guard descriptor >= 0 else { return true }
        let slot = slots[peer] ?? slots.count
        slots[peer] = slot
        var record: [UInt8] = []
        record.reserveCapacity(16)
        withUnsafeBytes(of: peer.rawValue.littleEndian) { record.append(contentsOf: $0) }
        withUnsafeBytes(of: id.littleEndian) { record.append(contentsOf: $0) }
        let written = record.withUnsafeBytes { pwrite(descriptor, $0.baseAddress!, 16, off_t(slot * 16)) }
        if written != 16 { logger.debug("durable receipt not written (errno \(errno))", metadata: ["peer": "\(peer)"]) }
        return true
    }

    private static func u64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { value, byte in value | UInt64(bytes[offset + byte]) << (8 * byte) }
    }
}
