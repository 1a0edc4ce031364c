// What the session's API uses from the other modules, so that `import LanSession` is enough for an application:
// discovery's connection to avahi-daemon (which `SessionDiscovery` runs on), and the codec's peer ids and reasons.
@_exported import class AvahiDiscovery.AvahiConnection
@_exported import struct AvahiDiscovery.AvahiError
@_exported import struct WireCodec.ByeReason
@_exported import struct WireCodec.DeclineReason
@_exported import struct WireCodec.PeerID
