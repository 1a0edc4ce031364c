import Crypto
import Foundation
import LanSession
import SessionControl

/// Byte streams on the control socket: `stream` sends a file's bytes to a peer as a byte stream.
extension ControlDispatcher {
    /// How many bytes of the file go to the stream per write.
    static let streamPieceSize = 64 * 1024

    /// Opens a byte stream to the peer, writes the file's bytes and finishes the stream; the reply says how many
    /// bytes went and their SHA-256. Any failure (the peer declined or cancelled, the stream failed, the file could
    /// not be read) is an error reply, and the stream is cancelled.
    func stream(_ path: String, to wanted: String, named name: String?) async throws -> StreamResult {
        let name = name ?? String(path.split(separator: "/").last ?? "stream")
        guard let file = FileHandle(forReadingAtPath: path) else { throw ControlError("cannot read \(path)") }
        defer { try? file.close() }
        let peer = try await member(named: wanted).peerID
        let started = ContinuousClock.now
        let stream = try await session.openStream(named: name, to: peer)
        var result = StreamResult(
            peerID: peer.description, name: name, id: stream.id, direction: "sending", phase: "opened", bytes: 0)
        var hash = SHA256()
        do throws(SessionError) {
            while true {
                let piece: Data
                do {
                    piece = try file.read(upToCount: Self.streamPieceSize) ?? Data()
                } catch {
                    throw SessionError(.io, "cannot read \(path): \(error.localizedDescription)")
                }
                if piece.isEmpty { break }
                hash.update(data: piece)
                try await stream.write(Array(piece))
                result.bytes += UInt64(piece.count)
            }
            try await stream.finish()
        } catch {
            await stream.cancel(reason: error.message)
            logger.debug("\(stream) failed after \(result.bytes) bytes: \(error.message)")
            throw ControlError(error.message)
        }
        result.phase = "finished"
        result.sha256 = hash.finalize().map { String(format: "%02x", $0) }.joined()
        result.seconds = StreamDesk.seconds(since: started)
        return result
    }
}
