/// Turns a byte stream arriving in chunks of any size into messages.
///
/// Between calls it keeps at most one incomplete frame, whose announced length was checked against the limit before
/// it was buffered. After an error every later call throws the same error: the stream cannot be resynchronised and
/// its connection should be closed.
public struct StreamDecoder: Sendable {
    /// The limits applied to every frame.
    public let limits: WireLimits
    private var storage: [UInt8] = []
    private var start = 0
    private var failure: WireError?

    /// Creates a decoder with no buffered bytes.
    public init(limits: WireLimits = .default) {
        self.limits = limits
    }

    /// Bytes received but not yet returned as messages.
    public var bufferedByteCount: Int { storage.count - start }

    /// Adds received bytes.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compact()
        storage.append(contentsOf: bytes)
    }

    /// Adds received bytes.
    public mutating func append(contentsOf bytes: some Sequence<UInt8>) {
        compact()
        storage.append(contentsOf: bytes)
    }

    /// The next complete message, or nil when more bytes are needed.
    public mutating func next() throws(WireError) -> Message? {
        if let failure { throw failure }
        let start = self.start
        let limits = self.limits
        let result: Result<(message: Message, length: Int)?, WireError> = storage.withUnsafeBytes { raw in
            Result { () throws(WireError) in
                try StreamFraming.decodeFrame(UnsafeRawBufferPointer(rebasing: raw[start...]), limits: limits)
            }
        }
        switch result {
        case .success(let frame?):
            self.start += frame.length
            return frame.message
        case .success(nil):
            return nil
        case .failure(let error):
            failure = error
            throw error
        }
    }

    /// Drops consumed bytes so that the storage holds only what is still needed.
    private mutating func compact() {
        if start == storage.count {
            storage.removeAll(keepingCapacity: storage.capacity <= 2 * limits.maxFrameLength)
            start = 0
        } else if start > 0 && start >= storage.count / 2 {
            storage.removeSubrange(0..<start)
            start = 0
        }
    }
}
