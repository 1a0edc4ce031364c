@_spi(Diagnostics) import LanSession
import TestSupport
import Testing

/// Invitations the application chooses: context, answer, timeout, and nothing stale left behind.
@Suite("Invitations per peer over loopback", .serialized)
struct InvitationTests {
    /// A, which invites only whom it is told to, knows B's address as discovery would give it; B asks its user.
    func pair() async throws -> (Session, Session) {
        var configuration = SessionConfiguration(
            peerID: PeerID(1), displayName: "a", sessionName: "test", host: "127.0.0.1")
        configuration.invitesDiscoveredPeers = false
        configuration.admission = .open
        configuration.isInsecure = true  // numbered peer ids
        let a = try Session(configuration: configuration)
        let b = try makeSession(2, name: "b", policy: .ask)
        try await a.start()
        try await b.start()
        try await a.discovered([await b.endpoint], peerID: b.peerID, name: "b", record: "b._lansession._tcp")
        return (a, b)
    }

    @Test("a discovered peer is not dialled until invited; the invitation carries its context and is accepted")
    func inviteAccepted() async throws {
        let (a, b) = try await pair()
        let asked = EventRecorder(b)
        // The dialler decided when the record came: a discovered peer, no link to it.
        let held = try #require(try await a.peers().first { $0.peerID == b.peerID })
        #expect(held.state == .discovered && held.links.isEmpty, "dialled before the invitation: \(held)")
        async let invited: Void = a.invite(b.peerID, context: Array("join the game".utf8), timeout: .seconds(5))
        #expect(
            await asked.wait { events in
                events.contains {
                    if case .invitation(let r) = $0 { r.context == Array("join the game".utf8) } else { false }
                }
            })
        let request = try #require(try await b.invitations().first)
        #expect(try await b.answer(request.id, accept: true))
        try await invited
        let invitations = asked.events.compactMap { if case .invitation(let r) = $0 { r } else { nil } }
        #expect(invitations.map(\.context) == [Array("join the game".utf8)], "one invitation, the one with the context")
        #expect(try await a.connectionState(of: b.peerID) == .connected)
        await stopAll([a, b])
    }

    @Test("a declined invitation fails with the reason; an unanswered one times out and leaves nothing listed")
    func inviteDeclinedAndTimedOut() async throws {
        let (a, b) = try await pair()
        let asked = EventRecorder(b)
        async let declined: SessionError? = {
            do throws(SessionError) {
                try await a.invite(b.peerID, timeout: .seconds(5))
                return nil
            } catch {
                return error
            }
        }()
        #expect(await asked.wait { $0.contains { if case .invitation = $0 { true } else { false } } })
        let request = try #require(try await b.invitations().first)
        try await b.answer(request.id, accept: false, reason: .rejected)
        let refusal = await declined
        #expect(
            refusal?.code == .declined && refusal?.message.contains("rejected") == true,
            "\(String(describing: refusal))")

        let started = ContinuousClock.now
        do {
            try await a.invite(b.peerID, timeout: .milliseconds(400))
            Issue.record("an unanswered invitation succeeded")
        } catch {
            #expect(error.code == .timedOut || error.code == .declined, "\(error)")
        }
        #expect(ContinuousClock.now - started < .seconds(2))
        let cleared = try await waitUntil { try await b.invitations().isEmpty }
        #expect(cleared, "the invitee's list has no stale invitation")
        #expect(try await a.connectionState(of: b.peerID) != .connected)
        await stopAll([a, b])
    }
}
