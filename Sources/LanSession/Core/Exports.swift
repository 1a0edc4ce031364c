// What the session's API uses from the codec and the links' cryptography, so that `import LanSession` is enough for an
// application: peer ids, reasons and the links' ciphers. An application with commands of its own imports WireCodec
// for its messages.
@_exported import enum LinkCrypto.NoiseCipher
@_exported import struct WireCodec.ByeReason
@_exported import struct WireCodec.DeclineReason
@_exported import struct WireCodec.PeerID
