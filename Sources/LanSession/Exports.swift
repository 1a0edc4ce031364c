// What the session's API uses from the codec, so that `import LanSession` is enough for an application.
@_exported import struct WireCodec.ByeReason
@_exported import struct WireCodec.DeclineReason
@_exported import struct WireCodec.PeerID
// Discovery's connection to avahi-daemon, which `SessionDiscovery` runs on.
@_exported import class AvahiDiscovery.AvahiConnection
@_exported import struct AvahiDiscovery.AvahiError
