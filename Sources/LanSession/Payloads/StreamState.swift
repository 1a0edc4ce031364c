import NIOCore
import WireCodec

/// A stream this peer opened, as its core keeps it.
final class OutgoingStreamState {
    enum Phase {
        /// `streamOpen` sent; waiting for the receiver's first credit (or its refusal).
        case opening(EventLoopPromise<UInt64>)
        /// Bytes flow.
        case open
        /// `streamEnd` sent; waiting for the receiver's verdict (resources only).
        case finishing(EventLoopPromise<Void>)
    }

    let key: StreamKey
    let kind: StreamKind
    let name: String
    let size: UInt64
    var phase: Phase
    /// Offset of the next byte to send.
    var sent: UInt64 = 0
    /// The receiver's credit: bytes below this offset may be sent.
    var limit: UInt64 = 0
    /// Where the receiver resumed (its first credit).
    var resumedFrom: UInt64 = 0
    /// A write that waits for credit or for room on the reliable channel.
    var parked: Write?

    /// A writer's pieces, where sending stands in them, and the writer's promise.
    struct Write {
        var pieces: [[UInt8]]
        /// The piece being sent, and how many of its bytes already went.
        var piece = 0
        var done = 0
        let promise: EventLoopPromise<Void>
    }
    var lastProgress = NIODeadline.uptimeNanoseconds(0)
    /// Called on the event loop with each progress value of a resource, besides the event.
    var onProgress: (@Sendable (TransferProgress) -> Void)?

    init(key: StreamKey, kind: StreamKind, name: String, size: UInt64, opened: EventLoopPromise<UInt64>) {
        self.key = key
        self.kind = kind
        self.name = name
        self.size = size
        self.phase = .opening(opened)
    }
}

/// A stream another peer opened to this one.
final class IncomingStreamState {
    let key: StreamKey
    let kind: StreamKind
    let name: String
    let size: UInt64
    /// Bytes arrived (the offset the next chunk must carry).
    var received: UInt64 = 0
    /// The credit granted so far.
    var granted: UInt64 = 0
    /// Where this attempt started (bytes a partial file already held).
    var resumedFrom: UInt64 = 0
    /// Ready for chunks: a byte stream at once, a resource once its partial file is open and hashed.
    var ready: Bool { kind == .bytes || file != nil }

    // Byte streams: chunks not read yet, and a reader waiting for one.
    var buffered: [[UInt8]] = []
    var bufferedHead = 0
    var consumed: UInt64 = 0
    var reader: EventLoopPromise<[UInt8]?>?
    /// The opener's end, once it came.
    var end: StreamEnd?

    // Resources: the file, chunks not written yet, whether a write is under way, bytes on disk.
    var file: ResourceFile?
    var pending: [[UInt8]] = []
    var writing = false
    var written: UInt64 = 0
    var lastProgress = NIODeadline.uptimeNanoseconds(0)

    init(key: StreamKey, kind: StreamKind, name: String, size: UInt64) {
        self.key = key
        self.kind = kind
        self.name = name
        self.size = size
    }

    var isBufferEmpty: Bool { bufferedHead >= buffered.count }

    func popChunk() -> [UInt8]? {
        guard !isBufferEmpty else { return nil }
        let chunk = buffered[bufferedHead]
        buffered[bufferedHead] = []
        bufferedHead += 1
        if bufferedHead > 64 && bufferedHead * 2 > buffered.count {
            buffered.removeFirst(bufferedHead)
            bufferedHead = 0
        }
        return chunk
    }
}

/// An application's message that waits for room on a peer's reliable channel.
struct PendingData {
    var payload: ByteBuffer
    /// Completed once the payload is on the channel: only the last of a batch has one.
    var promise: EventLoopPromise<Void>?
}
