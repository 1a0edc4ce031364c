import NIOCore

extension Channel {
    /// Writes `count` length-prefixed frames of `size` bytes on the channel's loop, flushing every `batch` frames: the
    /// baselines' sender (what a careful app does), the same whatever the channel's pipeline.
    func writeFrames(count: Int, size: Int, batch: Int) async throws {
        try await eventLoop.submit { [self] in
            var frame = allocator.buffer(capacity: size + 4)
            frame.writeInteger(UInt32(size))
            frame.writeRepeatingByte(7, count: size)
            for index in 1...count {
                write(frame, promise: nil)
                if index % batch == 0 || index == count { flush() }
            }
        }.get()
    }
}
