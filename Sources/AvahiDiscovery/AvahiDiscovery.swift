/// Discovery of LanSession peers over mDNS/DNS-SD through the Avahi daemon.
///
/// This module is a placeholder: it has no API yet. Publishing and browsing through libavahi-client arrive with the
/// test-host lab; until then sessions are configured with static endpoints only.
public enum AvahiDiscovery {}
