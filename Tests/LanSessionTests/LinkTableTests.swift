import NIOCore
import NIOEmbedded
import Testing
import WireCodec

@testable import LanSession

/// Open links, their tokens, and the caps on links that have not proved themselves.
@Suite("LinkTable")
struct LinkTableTests {
    let loop = EmbeddedEventLoop()

    func accepted(from address: String) throws -> Link {
        let channel = EmbeddedChannel(loop: loop)
        try channel.connect(to: SocketAddress(ipAddress: address, port: 40_000)).wait()
        return Link(
            channel: channel, role: .acceptor, transport: LANTransport(), endpoint: nil, intendedPeer: nil,
            liveness: Liveness(heartbeatInterval: .milliseconds(250), timeout: .seconds(2), now: .now()))
    }

    @Test("accepted links that have not proved themselves are capped per address and in all, and counted")
    func caps() throws {
        let table = LinkTable(maxUnproven: 3, maxUnprovenPerAddress: 2)
        for _ in 0..<2 {
            let link = try accepted(from: "10.0.0.7")
            table.add(link)
            #expect(table.refusal(forAccepted: link) == nil)
        }
        let third = try accepted(from: "10.0.0.7")
        table.add(third)
        #expect(table.refusal(forAccepted: third)?.contains("from 10.0.0.7") == true)
        third.step { $0.channelClosed() }
        let other = try accepted(from: "10.0.0.8")
        table.add(other)
        #expect(table.refusal(forAccepted: other) == nil)
        let fourth = try accepted(from: "10.0.0.9")
        table.add(fourth)
        #expect(table.refusal(forAccepted: fourth)?.contains("limit 3") == true)
        #expect(table.refusedUnproven == 2)
        #expect(table.oldestUnprovenForExhaustion() != nil)
        #expect(table.exhaustedAccepts == 1 && table.refusedUnproven == 3)
    }

    @Test("a token names its link until the link goes; a new token is one no link has")
    func tokens() throws {
        let table = LinkTable(maxUnproven: 64, maxUnprovenPerAddress: 16)
        let link = try accepted(from: "10.0.0.7")
        table.add(link)
        let token = table.newToken()
        #expect(token != 0)
        table.register(token: token, for: link)
        #expect(table.link(forToken: token) === link)
        #expect(table.newToken() != token)
        _ = link.step { $0.received(.hello(Hello(peerID: PeerID(2), displayName: "two", sessionName: "s"))) }
        _ = link.step { $0.admit(invitation: Invitation()) }
        _ = link.step { $0.received(.invitation(Invitation())) }
        _ = link.step { $0.accept(token: token) }
        table.remove(link)
        #expect(table.link(forToken: token) == nil)
        #expect(table.isEmpty)
    }

    @Test("a link whose machine closed before its channel (dropped for silence, or left) takes its token with it")
    func tokenOfClosedMachine() throws {
        let table = LinkTable(maxUnproven: 64, maxUnprovenPerAddress: 16)
        for _ in 0..<100 {
            let link = try accepted(from: "10.0.0.7")
            table.add(link)
            let token = table.newToken()
            _ = link.step { $0.received(.hello(Hello(peerID: PeerID(2), displayName: "two", sessionName: "s"))) }
            _ = link.step { $0.admit(invitation: Invitation()) }
            _ = link.step { $0.received(.invitation(Invitation())) }
            _ = link.step { $0.accept(token: token) }
            table.register(token: token, for: link)
            _ = link.step { $0.drop("silent") }
            #expect(link.machine.token == nil)
            table.remove(link)
            #expect(table.link(forToken: token) == nil)
        }
        #expect(table.tableSizes == ["links": 0, "linkTokens": 0, "linkTokenOwners": 0])
    }
}
