import Foundation
import TestSupport
import Testing
import WireCodec

@testable import LanSession

/// Trust per device between real sessions on loopback: pairing with a code both show, introductions, removal.
@Suite("Trust per device over loopback", .serialized)
struct DeviceTrustTests {
    /// Pairs `asker` with `other` (which `asker` reaches at its endpoint) and returns the codes both showed.
    func pair(_ asker: Session, with other: Session) async throws -> (String, String) {
        try await asker.connect(to: await other.endpoint)
        var request: PairingRequest?
        let asked = await waitUntil(.seconds(5)) {
            request = try? await asker.requestPairing(with: other.peerID)
            return request != nil
        }
        #expect(asked, "no link to ask on")
        var shown: PairingRequest?
        _ = try await waitUntil(.seconds(5)) {
            shown = try await other.pairings().first { $0.peerID == asker.peerID }
            return shown != nil
        }
        let here = try #require(request)
        let there = try #require(shown)
        #expect(here.fingerprint == other.fingerprint)
        #expect(there.fingerprint == asker.fingerprint)
        try await other.confirmPairing(with: asker.peerID, code: there.code)
        try await asker.confirmPairing(with: other.peerID, code: here.code)
        return (here.code, there.code)
    }

    func connected(_ session: Session, to others: [Session]) async throws -> Bool {
        let ids = Set(try await session.connectedPeers().map(\.peerID))
        return others.allSatisfy { ids.contains($0.peerID) }
    }

    /// Every session is connected to the ones listed with it.
    func connected(_ pairs: [(Session, [Session])]) async throws -> Bool {
        for (session, others) in pairs where try await !connected(session, to: others) { return false }
        return true
    }

    @Test("two devices pair with the same code on both; a wrong code is refused; then they are members of each other")
    func pairing() async throws {
        let a = try makeSecureSession(name: "a", admission: .paired)
        let b = try makeSecureSession(name: "b", admission: .paired)
        defer { Task { await stopAll([a, b]) } }
        try await a.start()
        try await b.start()
        try await b.connect(to: await a.endpoint)
        // Strangers: the handshake completes (a pairing can be asked on its link), nothing more.
        var request: PairingRequest?
        _ = await waitUntil(.seconds(5)) {
            request = try? await a.requestPairing(with: b.peerID)
            return request != nil
        }
        #expect(try await a.connectedPeers().isEmpty)
        let asked = try #require(request)
        var shown: PairingRequest?
        _ = try await waitUntil(.seconds(5)) {
            shown = try await b.pairings().first
            return shown != nil
        }
        #expect(shown?.code == asked.code)
        #expect(shown?.requestedHere == false && asked.requestedHere)
        let wrong = asked.code == "123456" ? "654321" : "123456"
        await #expect(throws: SessionError.self) { try await b.confirmPairing(with: a.peerID, code: wrong) }
        try await b.confirmPairing(with: a.peerID, code: asked.code)
        #expect(try await a.connectedPeers().isEmpty, "paired before both confirmed")
        try await a.confirmPairing(with: b.peerID, code: asked.code)
        #expect(try await waitUntil(.seconds(5)) { try await connected([(a, [b]), (b, [a])]) })
        #expect(try await a.trustedDevices().map(\.peerID) == [b.peerID])
        #expect(try await b.trustedDevices().first?.trust == .paired)
        #expect(try await a.peers().first?.trust == .paired)
        #expect(try await a.pairings().isEmpty)
    }

    @Test("two sessions made with the default configuration do not join until paired, and each says why")
    func defaultsSayWhy() async throws {
        let a = try Session(configuration: SessionConfiguration(displayName: "a"))
        let b = try Session(configuration: SessionConfiguration(displayName: "b"))
        defer { Task { await stopAll([a, b]) } }
        let (seenByA, seenByB) = (EventRecorder(a), EventRecorder(b))
        try await a.start()
        try await b.start()
        try await b.connect(to: Endpoint(host: "127.0.0.1", port: await a.port))
        func told(_ recorder: EventRecorder<SessionEvent>, about other: Session) async -> Bool {
            await recorder.wait { events in
                events.contains {
                    if case .notice(.notPaired(other.peerID, _, other.fingerprint)) = $0 { true } else { false }
                }
            }
        }
        #expect(await told(seenByA, about: b))
        #expect(await told(seenByB, about: a))
        #expect(try await a.connectedPeers().isEmpty)
        let notice = SessionNotice.notPaired(b.peerID, name: "b", fingerprint: b.fingerprint)
        #expect("\(notice)".contains("is not paired with this device"))
        #expect(!"\(notice)".contains("\n"))
    }

    @Test(
        "pair with one member and be admitted by all; removed by one, out of all within 2 s, and only pairing again lets it back"
    )
    func introductionsAndRemoval() async throws {
        let sessions = try ["one", "two", "three", "four"].map { try makeSecureSession(name: $0, admission: .paired) }
        defer { Task { await stopAll(sessions) } }
        for session in sessions { try await session.start() }
        let (one, two, three, four) = (sessions[0], sessions[1], sessions[2], sessions[3])
        _ = try await pair(two, with: one)
        _ = try await pair(three, with: one)
        // Two and three never paired with each other: one introduced them.
        #expect(try await waitUntil(.seconds(5)) { try await connected(two, to: [one, three]) })
        #expect(try await two.trustedDevices().first { $0.peerID == three.peerID }?.trust == .introduced)
        #expect(try await two.trustedDevices().first { $0.peerID == three.peerID }?.introducedBy == one.peerID)
        // Four pairs with one only; two and three admit it.
        _ = try await pair(four, with: one)
        #expect(
            try await waitUntil(.seconds(5)) {
                try await connected([(four, [one, two, three]), (two, [four]), (three, [four])])
            })
        // Two removes four: out everywhere within 2 s.
        let removed = ContinuousClock.now
        try await two.unpair(four.peerID)
        let out = try await waitUntil(.seconds(2), every: .milliseconds(10)) {
            for member in [one, two, three]
            where try await member.connectedPeers().contains(where: { $0.peerID == four.peerID }) {
                return false
            }
            return true
        }
        print("measured: removed from three members in \(ContinuousClock.now - removed)")
        #expect(out, "four is still connected somewhere 2 s after its removal")
        for member in [one, two, three] {
            #expect(try await member.trustedDevices().contains { $0.peerID == four.peerID } == false)
            #expect(try await member.removedDevices().contains { $0.peerID == four.peerID })
        }
        // It redials and presents its old introduction: refused by all.
        let seenByTwo = EventRecorder(two)
        try await four.connect(to: await two.endpoint)
        let held = await seenByTwo.wait {
            $0.contains { if case .notice(.notPaired(four.peerID, _, _)) = $0 { true } else { false } }
        }
        #expect(held, "two did not hold the removed device as a stranger")
        let back = try await connected(two, to: [four])
        #expect(!back, "a removed device got back in on its old introduction")
        // Pairing again with one lets it back everywhere.
        _ = try await pair(four, with: one)
        #expect(
            try await waitUntil(.seconds(5)) { try await connected([(one, [four]), (two, [four]), (three, [four])]) })
    }
}

/// The rules of the trusted set, as a value.
@Suite("TrustedDevices")
struct TrustedDevicesTests {
    let session = "s"

    func set(_ identity: DeviceIdentity) -> TrustedDevices { TrustedDevices(identity: identity, sessionName: session) }

    @Test(
        "a statement is believed only from a trusted issuer with a valid signature; highest version wins, removal wins a tie"
    )
    func rules() throws {
        let (me, friend, newcomer, stranger) = (
            DeviceIdentity.generate(), DeviceIdentity.generate(), DeviceIdentity.generate(), DeviceIdentity.generate()
        )
        var mine = set(me)
        var friends = set(friend)
        var strangers = set(stranger)
        _ = try mine.pair(
            publicKey: friend.publicKey, signingKey: friend.signingPublicKey, name: "friend", now: Date())
        let device = try friends.pair(
            publicKey: newcomer.publicKey, signingKey: newcomer.signingPublicKey, name: "new", now: Date())
        #expect(device.version == 1)
        let introduction = try #require(friends.shared.first)
        // A stranger's statement, or a forged signature, is ignored.
        _ = try strangers.pair(
            publicKey: newcomer.publicKey, signingKey: newcomer.signingPublicKey, name: "new", now: Date())
        guard case .ignored = mine.accept(try #require(strangers.shared.first), now: Date()) else {
            Issue.record("a stranger's statement was believed")
            return
        }
        var forged = introduction
        forged.signature[0] ^= 1
        guard case .ignored = mine.accept(forged, now: Date()) else {
            Issue.record("a forged statement was believed")
            return
        }
        guard case .added(let added) = mine.accept(introduction, now: Date()) else {
            Issue.record("the friend's introduction was not believed")
            return
        }
        #expect(added.trust == .introduced && added.introducedBy == friend.peerID)
        // Re-issued under this device's key, at the same version.
        #expect(
            mine.shared.contains { $0.issuer == me.peerID && $0.subjectKey == newcomer.publicKey && $0.version == 1 })
        // A removal at a higher version wins; the old introduction does not bring it back; a tie goes to the removal.
        try friends.remove(newcomer.peerID, now: Date())
        let removal = try #require(friends.shared.first { $0.verb == .remove })
        #expect(removal.version == 2)
        #expect(mine.accept(removal, now: Date()) == .removed(newcomer.peerID))
        guard case .ignored = mine.accept(introduction, now: Date()) else {
            Issue.record("an old introduction undid a removal")
            return
        }
        let again = try friends.pair(
            publicKey: newcomer.publicKey, signingKey: newcomer.signingPublicKey, name: "new", now: Date())
        #expect(again.version == 3)
        guard case .added = mine.accept(try #require(friends.shared.first { $0.verb == .introduce }), now: Date())
        else {
            Issue.record("pairing again did not let it back")
            return
        }
        // A statement of another session does not verify.
        var other = TrustedDevices(identity: me, sessionName: "other")
        _ = try other.pair(publicKey: friend.publicKey, signingKey: friend.signingPublicKey, name: "f", now: Date())
        guard case .ignored = other.accept(try #require(friends.shared.first), now: Date()) else {
            Issue.record("a statement crossed sessions")
            return
        }
    }

    @Test("a trust message carries the sender's own statements, one per device, by subject; the order does not matter")
    func shared() throws {
        let (me, friend) = (DeviceIdentity.generate(), DeviceIdentity.generate())
        let others = (0..<5).map { _ in DeviceIdentity.generate() }
        var friends = set(friend)
        _ = try friends.pair(publicKey: me.publicKey, signingKey: me.signingPublicKey, name: "me", now: Date())
        for (index, other) in others.enumerated() {
            _ = try friends.pair(
                publicKey: other.publicKey, signingKey: other.signingPublicKey, name: "o\(index)", now: Date())
        }
        try friends.remove(others[0].peerID, now: Date())
        var sets: [TrustedDevices] = []
        for order in [friends.shared, friends.shared.reversed()] {
            var mine = set(me)
            _ = try mine.pair(
                publicKey: friend.publicKey, signingKey: friend.signingPublicKey, name: "friend", now: Date())
            for statement in order { _ = mine.accept(statement, now: Date()) }
            sets.append(mine)
        }
        let shared = sets[0].shared
        let subjects = shared.map { PeerID(publicKey: $0.subjectKey) }
        #expect(shared.allSatisfy { $0.issuer == me.peerID }, "only its own statements")
        #expect(subjects == subjects.sorted(), "by subject")
        #expect(Set(subjects) == Set([friend.peerID] + others.map(\.peerID)), "one per device, none about itself")
        #expect(shared.filter { $0.verb == .remove }.map(\.subjectKey) == [others[0].publicKey])
        #expect(!sets[0].introductionsOfMe.isEmpty, "the introduction of itself is kept for its handshakes")
        #expect(sets[0].devices.mapValues(\.version) == sets[1].devices.mapValues(\.version))
        #expect(sets[0].removals.mapValues(\.version) == sets[1].removals.mapValues(\.version))
    }

    @Test("a statement of another verb is well formed, and ignored: neither applied nor re-issued")
    func otherVerbs() throws {
        let (me, friend, subject) = (DeviceIdentity.generate(), DeviceIdentity.generate(), DeviceIdentity.generate())
        var mine = set(me)
        _ = try mine.pair(publicKey: friend.publicKey, signingKey: friend.signingPublicKey, name: "f", now: Date())
        var statement = TrustStatement(
            verb: TrustStatement.Verb(rawValue: 3), subjectKey: subject.publicKey,
            subjectSigningKey: subject.signingPublicKey, subjectName: "s", version: 9, time: 0, issuer: friend.peerID)
        statement.signature = Array(try friend.signingKey.signature(for: statement.signedBytes(sessionName: session)))
        let frame = try StreamFraming.encode(.trust([statement]))
        var decoder = StreamDecoder()
        decoder.append(contentsOf: frame)
        #expect(try decoder.next() == .trust([statement]), "the codec keeps the verb")
        let before = mine.shared
        guard case .ignored = mine.accept(statement, now: Date()) else {
            Issue.record("a statement of verb 3 was applied")
            return
        }
        #expect(mine.devices[subject.peerID] == nil && mine.removals[subject.peerID] == nil)
        #expect(mine.shared == before)
    }

    @Test("the trusted set survives a save and a load; a file that is not one is refused, never replaced")
    func store() throws {
        let directory = FileManager.default.temporaryDirectory.path + "/trust-\(UInt64.random(in: 1...UInt64.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let me = DeviceIdentity.generate()
        var trusted = set(me)
        let friend = DeviceIdentity.generate()
        _ = try trusted.pair(publicKey: friend.publicKey, signingKey: friend.signingPublicKey, name: "f", now: Date())
        let store = TrustStore(path: directory + "/trusted-devices.json")
        try store.save(trusted)
        let loaded = try store.load(identity: me, sessionName: session)
        #expect(loaded.devices.mapValues(\.publicKey) == trusted.devices.mapValues(\.publicKey))
        #expect(loaded.devices.mapValues(\.trust) == trusted.devices.mapValues(\.trust))
        #expect(loaded.shared == trusted.shared)
        let attributes = try FileManager.default.attributesOfItem(atPath: store.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        try Data("{ half".utf8).write(to: URL(fileURLWithPath: store.path))
        #expect(throws: SessionError.self) { try store.load(identity: me, sessionName: session) }
        #expect(try String(contentsOfFile: store.path, encoding: .utf8) == "{ half")
    }
}

/// The device key file.
@Suite("DeviceIdentity")
struct DeviceIdentityTests {
    func directory() throws -> String {
        let path = FileManager.default.temporaryDirectory.path + "/device-\(UInt64.random(in: 1...UInt64.max))"
        return path
    }

    @Test("made once (0600 in a 0700 directory), the same device after; a key others may read or a corrupt one stops")
    func keyFile() throws {
        let path = try directory()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = try DeviceIdentity.persistent(in: path)
        #expect(try DeviceIdentity.persistent(in: path).peerID == first.peerID)
        #expect(first.peerID == PeerID(publicKey: first.publicKey))
        #expect(first.fingerprint.count == 19 && first.fingerprint.split(separator: "-").count == 4)
        let key = path + "/device-key"
        #expect((try FileManager.default.attributesOfItem(atPath: key)[.posixPermissions] as? Int) == 0o600)
        #expect((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) == 0o700)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: key)
        #expect(throws: SessionError.self) { try DeviceIdentity.persistent(in: path) }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        let original = try Data(contentsOf: URL(fileURLWithPath: key))
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: key))
        #expect(throws: SessionError.self) { try DeviceIdentity.persistent(in: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: key)) == Data("garbage".utf8), "the corrupt key was replaced")
        #expect(original.count == DeviceIdentity.fileLength)
    }
}
