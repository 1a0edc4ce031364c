import NIOCore
import NIOPosix

extension ThroughputBench {
    /// The anchor for sealed messages: how long TLS 1.3 (AES-GCM, see TLSSink) on 127.0.0.1 takes to move `count`
    /// length-prefixed frames of `size` bytes, flushed every `batch` frames. The handshake is done before the clock
    /// starts, as a session's is before its messages.
    static func tlsBaseline(
        count: Int, size: Int, batch: Int, group: MultiThreadedEventLoopGroup
    ) async throws -> Duration {
        let sink = try await TLSSink.start(group: group, expecting: count * (size + 4))
        let start = ContinuousClock.now
        do {
            try await sink.send(count: count, size: size, batch: batch)
        } catch {
            await sink.close()
            throw error
        }
        let time = ContinuousClock.now - start
        await sink.close()
        return time
    }
}
