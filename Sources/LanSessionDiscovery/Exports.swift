// What an application that discovers its peers uses from Avahi's module, so that `import LanSessionDiscovery` is
// enough: the connection to avahi-daemon that `SessionDiscovery` runs on, and its errors.
@_exported import class AvahiDiscovery.AvahiConnection
@_exported import struct AvahiDiscovery.AvahiError
@_exported import struct AvahiDiscovery.ServiceDescription
