import LinkCrypto
import NIOCore
import WireCodec

/// Splits a byte stream into messages with WireCodec's stream framing; ``LinkHandler`` feeds it what a link reads.
/// A malformed frame is an error: the link closes with the reason logged.
///
/// With encryption, the frames after the handshake come in sealed records: each record is opened (a bad tag is an
/// error, and the link closes) and its plaintext, which may hold parts of frames, is framed as before. The opener is
/// taken from the link's security as soon as the core set it, that is right after the message that completed the
/// handshake for this side's reading (the dialer's message 2, the acceptor's message 3).
struct WireFrameDecoder {
    /// What one frame brings.
    enum Frame {
        /// Any message but `data`.
        case message(Message)
        /// A `data` message's payload: a slice of the buffer it was read or opened into, not a copy.
        case data(ByteBuffer)
    }

    let limits: WireLimits
    let security: LinkSecurity?
    private var opener: RecordOpener?
    /// Opened bytes not yet framed. The payloads of `data` frames are slices of it: a record is opened into a buffer of
    /// its own unless this one is no longer shared (no payload of it is still held) and holds nothing unread.
    private var plaintext = ByteBuffer()

    init(limits: WireLimits, security: LinkSecurity? = nil) {
        self.limits = limits
        self.security = security
    }

    /// The next whole frame in `buffer`, whose reader index moves past it; nil when `buffer` holds no whole frame
    /// (or sealed record) any more.
    mutating func next(from buffer: inout ByteBuffer) throws -> Frame? {
        if opener == nil, let security, let taken = security.takeOpener() { opener = taken }
        guard opener == nil else { return try nextSealed(from: &buffer) }
        return try Self.frame(in: &buffer, limits: limits)
    }

    /// How long the frame (or sealed record) at the start of `buffer` is, once its header is complete: the room to keep
    /// for the rest of it, so that the bytes still to come are appended without the buffer growing step by step.
    func pendingLength(in buffer: ByteBuffer) -> Int? {
        buffer.withUnsafeReadableBytes { raw -> Int? in
            if opener != nil { return (try? RecordOpener.recordLength(in: raw)) ?? nil }
            guard let (header, body) = (try? StreamFraming.decodeHeader(raw, limits: limits)) ?? nil else { return nil }
            return header + body
        }
    }

    /// The frame at the start of `buffer`, if whole; a `data` payload as a slice of `buffer`.
    private static func frame(in buffer: inout ByteBuffer, limits: WireLimits) throws -> Frame? {
        if let data = buffer.withUnsafeReadableBytes({ StreamFraming.locateDataFrame($0, limits: limits) }) {
            let payload = buffer.getSlice(at: buffer.readerIndex + data.payloadOffset, length: data.payloadLength)!
            buffer.moveReaderIndex(forwardBy: data.frameLength)
            return .data(payload)
        }
        let frame = try buffer.withUnsafeReadableBytes { raw in try StreamFraming.decodeFrame(raw, limits: limits) }
        guard let (message, length) = frame else { return nil }
        buffer.moveReaderIndex(forwardBy: length)
        return .message(message)
    }

    private mutating func nextSealed(from buffer: inout ByteBuffer) throws -> Frame? {
        while true {
            if let frame = try Self.frame(in: &plaintext, limits: limits) { return frame }
            guard var opener,
                let length = try buffer.withUnsafeReadableBytes({ raw in try RecordOpener.recordLength(in: raw) }),
                buffer.readableBytes >= length
            else { return nil }
            defer { self.opener = opener }
            let opened = length - RecordSealer.headerLength - Wire.sealTagLength
            if plaintext.readableBytes == 0 {
                // Payloads handed out may still hold the old buffer: writing into it would copy it whole. `clear`
                // keeps it when nothing else does.
                plaintext.clear()
            } else {
                plaintext.discardReadBytes()
            }
            // Opened straight into the plaintext's buffer, which grows only by what the record holds.
            try plaintext.writeWithUnsafeMutableBytes(minimumWritableBytes: opened) { output in
                try buffer.withUnsafeReadableBytes { raw in
                    try opener.open(UnsafeRawBufferPointer(rebasing: raw[..<length]), into: output)?.written ?? 0
                }
            }
            buffer.moveReaderIndex(forwardBy: length)
        }
    }
}
