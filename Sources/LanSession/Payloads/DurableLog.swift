import Logging
import NIOCore
import NIOPosix
import WireCodec

/// Durable messages on the sender's side (docs/wire-format.md, section 10.5): each numbered, written to the session's
/// directory and synced before its send returns, kept until its receiver acknowledged it, and read back at the next
/// start to be sent again.
///
/// Writes go in batches (group commit): while one batch is written and synced on a thread of the pool, the messages
/// sent meanwhile gather in the next, which goes as soon as the first is done, so that many sends share one sync. A
/// batch that cannot be written (a full disk) fails the sends in it and changes nothing already kept.
final class DurableLog {
    /// A message kept for a peer.
    struct Entry {
        let id: UInt64
        let payload: ByteBuffer
        /// Its sequence number on the peer's reliable channel, once sent there.
        var sequence: UInt64?
    }

    /// The log's file in the session's directory.
    static let fileName = "durable.log"
    /// The file is rewritten with only what is still kept once it is larger than this and four times what is kept.
    static let compactionSize = 4 << 20

    private let loop: any EventLoop
    private let logger: Logger
    /// The file, or why there is none (nil: the session keeps no durable messages).
    private let file: Result<DurableLogFile, SessionError>?
    private var nextID: UInt64 = 1
    /// Per peer, what is kept for it, in id order.
    private var kept: [PeerID: [Entry]] = [:]
    private var keptBytes = 0
    /// The batch gathering: its records, the promise of the sends in it, and its messages.
    private var batch: [UInt8] = []
    private var batchWritten: EventLoopPromise<Void>?
    private var batchMessages: [(peer: PeerID, id: UInt64)] = []
    /// Whether a batch (or a compaction) is being written.
    private var writing = false

    /// Opens the log in `directory` and reads what it keeps; nil keeps none.
    init(directory: String?, loop: any EventLoop, logger: Logger) {
        self.loop = loop
        self.logger = logger
        guard let directory else {
            file = nil
            return
        }
        do {
            let file = try DurableLogFile(path: directory + "/" + Self.fileName)
            let contents = try file.read()
            for message in contents.messages.sorted(by: { $0.id < $1.id })
            where message.id > contents.acknowledged[message.peer] ?? 0 {
                kept[message.peer, default: []].append(
                    Entry(id: message.id, payload: ByteBuffer(bytes: message.payload)))
                keptBytes += message.payload.count
            }
            nextID = max(contents.floor, (contents.messages.map(\.id).max() ?? 0) + 1)
            self.file = .success(file)
            if !kept.isEmpty { logger.debug("durable messages kept from before the start: \(keptCount)") }
        } catch {
            logger.debug("durable messages cannot be kept: \(error)")
            file = .failure(error)
        }
    }

    /// How many messages are kept, for every peer.
    var keptCount: Int { kept.values.reduce(0) { $0 + $1.count } }

    /// The peers messages are kept for, and those messages, in id order.
    var keptMessages: [(peer: PeerID, entries: [Entry])] {
        kept.keys.sorted().map { ($0, kept[$0]!) }
    }

    /// Keeps every payload for every peer, each numbered in order; the future succeeds with them once they are on
    /// the disk (then, and only then, they may be sent), and fails when they could not be written.
    func keep(_ payloads: [ByteBuffer], for peers: [PeerID]) -> EventLoopFuture<[(peer: PeerID, entry: Entry)]> {
        let file: DurableLogFile
        switch self.file {
        case .none:
            return loop.makeFailedFuture(
                SessionError(
                    .invalidArgument, "durable messages need a directory (SessionConfiguration.durableDirectory)"))
        case .failure(let error):
            return loop.makeFailedFuture(error)
        case .success(let opened):
            file = opened
        }
        var added: [(peer: PeerID, entry: Entry)] = []
        for peer in peers {
            for payload in payloads {
                let entry = Entry(id: nextID, payload: payload)
                nextID += 1
                DurableLogFile.append(
                    .message, [peer.rawValue, entry.id], payload: payload.readableBytesView, to: &batch)
                batchMessages.append((peer, entry.id))
                kept[peer, default: []].append(entry)
                keptBytes += payload.readableBytes
                added.append((peer, entry))
            }
        }
        guard !added.isEmpty else { return loop.makeSucceededFuture([]) }  // no member, or nothing to send
        let written = batchWritten ?? loop.makePromise()
        batchWritten = written
        if !writing { write(to: file) }
        let entries = added
        return written.futureResult.map { entries }
    }

    /// The entry `id` for `peer` went on its reliable channel as `sequence`.
    func sent(_ id: UInt64, to peer: PeerID, sequence: UInt64) {
        guard let index = index(of: id, for: peer) else { return }
        kept[peer]![index].sequence = sequence
    }

    /// Where the entry `id` is in what is kept for `peer` (in id order: a binary search, not a scan of every message
    /// kept, which may be thousands while a peer is away).
    private func index(of id: UInt64, for peer: PeerID) -> Int? {
        guard let entries = kept[peer] else { return nil }
        var low = entries.startIndex
        var high = entries.endIndex
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low < entries.endIndex && entries[low].id == id ? low : nil
    }

    /// `peer` acknowledged every sequence number below `sequence`: what it got is no longer kept.
    func acknowledged(by peer: PeerID, below sequence: UInt64) {
        guard let entries = kept[peer], let first = entries.first, let sent = first.sequence, sent < sequence else {
            return
        }
        let count = entries.prefix { $0.sequence.map { $0 < sequence } ?? false }.count
        let last = entries[count - 1].id
        keptBytes -= entries.prefix(count).reduce(0) { $0 + $1.payload.readableBytes }
        kept[peer] = count == entries.count ? nil : Array(entries.dropFirst(count))
        DurableLogFile.append(.acknowledged, [peer.rawValue, last], to: &batch)
        if !writing, case .success(let file) = self.file { write(to: file) }
    }

    /// What is kept for `peer`, to send again from the start of its channel (it restarted), with the sequence
    /// numbers they had: none counts as sent from now on.
    func resend(to peer: PeerID) -> [Entry] {
        guard var entries = kept[peer] else { return [] }
        let had = entries
        for index in entries.indices { entries[index].sequence = nil }
        kept[peer] = entries
        return had
    }

    // MARK: - Writing

    /// Writes the batch gathered so far, and then the next.
    private func write(to file: DurableLogFile) {
        guard !batch.isEmpty else { return }
        let (bytes, written, messages) = (batch, batchWritten, batchMessages)
        (batch, batchWritten, batchMessages) = ([], nil, [])
        writing = true
        let bound = NIOLoopBound(self, eventLoop: loop)
        NIOThreadPool.singleton.runIfActive(eventLoop: loop) { () throws -> Void in
            try file.append(bytes)
        }.whenComplete { result in
            let log = bound.value
            log.writing = false
            switch result {
            case .success:
                written?.succeed()
            case .failure(let error):
                log.forget(messages)
                log.logger.debug("durable messages not written: \(error)", metadata: ["file": "\(file.path)"])
                written?.fail(SessionError(error))
            }
            if !log.compactIfDue(file) { log.write(to: file) }
        }
    }

    /// Takes back messages whose batch could not be written.
    private func forget(_ messages: [(peer: PeerID, id: UInt64)]) {
        for (peer, id) in messages {
            guard let index = index(of: id, for: peer) else { continue }
            keptBytes -= kept[peer]![index].payload.readableBytes
            kept[peer]!.remove(at: index)
            if kept[peer]!.isEmpty { kept[peer] = nil }
        }
    }

    /// Rewrites the file with only what is kept, when it grew past ``compactionSize`` and four times that; true
    /// when it started to.
    private func compactIfDue(_ file: DurableLogFile) -> Bool {
        guard batch.isEmpty, file.size > Self.compactionSize, keptBytes * 4 < file.size else { return false }
        var bytes: [UInt8] = []
        DurableLogFile.append(.floor, [nextID], to: &bytes)
        for (peer, entries) in keptMessages {
            for entry in entries {
                DurableLogFile.append(
                    .message, [peer.rawValue, entry.id], payload: entry.payload.readableBytesView, to: &bytes)
            }
        }
        writing = true
        let bound = NIOLoopBound(self, eventLoop: loop)
        let compacted = bytes
        NIOThreadPool.singleton.runIfActive(eventLoop: loop) { () throws -> Void in
            try file.replace(with: compacted)
        }.whenComplete { result in
            let log = bound.value
            log.writing = false
            if case .failure(let error) = result { log.logger.debug("durable log not compacted: \(error)") }
            log.write(to: file)
        }
        return true
    }
}
