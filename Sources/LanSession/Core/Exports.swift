// What the session's API uses from the codec, the links' cryptography and SwiftNIO, so that `import LanSession` is
// enough for an application: peer ids, reasons, the links' ciphers and the buffers messages come in. An application
// with commands of its own imports WireCodec for its messages.
@_exported import enum LinkCrypto.NoiseCipher
@_exported import struct NIOCore.ByteBuffer
@_exported import struct NIOCore.ByteBufferAllocator
@_exported import struct WireCodec.ByeReason
@_exported import struct WireCodec.DeclineReason
@_exported import struct WireCodec.PeerID
