// What the session's API uses from the codec, so that `import LanSession` is enough for an application.
@_exported import struct WireCodec.ByeReason
@_exported import struct WireCodec.DeclineReason
@_exported import struct WireCodec.PeerID
