import NIOCore

/// Application messages from one peer on one channel that arrived together (in one read of its link), in order: the
/// payload of ``SessionEvent/messages(_:)``.
///
/// Each message is a `ByteBuffer` that is a slice of the buffer its bytes were read or opened into: nothing was
/// copied on the way. Holding one keeps that buffer (at most a record or a read, some tens of KiB) alive; copy the
/// bytes out to keep a message for long.
public struct ReceivedMessages: RandomAccessCollection, Hashable, Sendable {
    /// The sender.
    public var from: PeerID
    /// Whether they came on the reliable channel (exactly once, in order) or as datagrams.
    public var reliable: Bool
    /// The messages, in the order they were sent.
    public var messages: [ByteBuffer]

    /// A batch of `messages` from `from`.
    public init(from: PeerID, reliable: Bool, messages: [ByteBuffer]) {
        self.from = from
        self.reliable = reliable
        self.messages = messages
    }

    public var startIndex: Int { messages.startIndex }
    public var endIndex: Int { messages.endIndex }
    public subscript(position: Int) -> ByteBuffer { messages[position] }
}

/// How a subscriber (``Session/subscribe(bufferSize:data:)``) takes application messages.
public enum DataDelivery: String, Hashable, Sendable, CaseIterable {
    /// One ``SessionEvent/data(from:bytes:reliable:)`` per message: the simple form.
    case eachMessage
    /// One ``SessionEvent/messages(_:)`` per read of a link: many messages per element of the stream, the form for
    /// apps that move many small messages.
    case batches
}
