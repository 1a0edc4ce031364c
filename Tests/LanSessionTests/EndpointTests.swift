import LanSession
import Testing

@Suite("Endpoint")
struct EndpointTests {
    @Test("endpoints parse from host:port")
    func parsing() {
        #expect(Endpoint(parsing: "10.0.0.1:80") == Endpoint(host: "10.0.0.1", port: 80))
        #expect(Endpoint(parsing: "[::1]:4242") == Endpoint(host: "::1", port: 4242))
        #expect(Endpoint(parsing: "host:0") == nil)
        #expect(Endpoint(parsing: "host") == nil)
        #expect(Endpoint(parsing: ":80") == nil)
    }

    @Test("a LAN endpoint reads as HOST:PORT, IPv6 in brackets; another transport's as ADDRESS/CHANNEL")
    func description() {
        #expect(Endpoint(host: "10.0.0.1", port: 80).description == "10.0.0.1:80")
        #expect(Endpoint(host: "fe80::1%eth0", port: 4242).description == "[fe80::1%eth0]:4242")
        #expect(Endpoint(transport: "alt", host: "00:AA:01:00:00:00", port: 5).description == "00:AA:01:00:00:00/5")
    }
}
