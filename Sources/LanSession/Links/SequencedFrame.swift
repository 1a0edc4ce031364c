import NIOCore

/// A numbered frame as the reliable channel hands it to a link: encoded whole, or an application's payload whose
/// `data` frame header the link writes in front of it.
enum SequencedFrame {
    case encoded(ByteBuffer)
    case data(ByteBuffer)
}
