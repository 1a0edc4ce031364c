import Foundation
import SessionControl
import TestSupport
import Testing

/// Trust per device on test hosts, with real daemons in admission `paired` and an attacker on a host of its own
/// (the independent peer of Tests/Interop): pairing, introductions, removal, relays, impostors, a full disk.
@Suite(
    "Pairing and trust per device on test hosts", .serialized,
    .disabled(
        if: TestLab.unavailableReason != nil || PythonPeer.unavailableReason != nil,
        Comment(rawValue: TestLab.unavailableReason ?? PythonPeer.unavailableReason ?? ""))
)
struct PairingTests {
    static let paired = ["--admission", "paired"]

    /// `asker` asks `other` to pair, both show their code, the test compares them as a person would and confirms on
    /// both (`other` first); returns the code.
    @discardableResult
    func pair(_ cluster: Cluster, _ asker: Int, with other: Int) async throws -> String {
        let otherID = try cluster.peerID(other)
        let askerID = try cluster.peerID(asker)
        var asked: [String: Any]?
        _ = await waitUntil(.seconds(15), every: .milliseconds(100)) {
            asked = (try? cluster.client(asker, ["pair", otherID]) as? [String: Any])?["pairing"] as? [String: Any]
            return asked != nil
        }
        let code = try #require(asked?["code"] as? String, "host \(asker) could not ask host \(other) to pair")
        var shown: String?
        _ = await waitUntil(.seconds(5), every: .milliseconds(50)) {
            let pairings = try? cluster.client(other, ["pairings"]) as? [[String: Any]]
            shown = pairings?.first { $0["peerID"] as? String == askerID }?["code"] as? String
            return shown != nil
        }
        #expect(shown == code, "host \(other) shows \(shown ?? "nothing"), host \(asker) shows \(code)")
        _ = try cluster.client(other, ["pair", askerID, "--confirm", code])
        let done = try cluster.client(asker, ["pair", otherID, "--confirm", code]) as? [String: Any]
        #expect(done?["paired"] as? Bool == true)
        return code
    }

    func isConnected(_ cluster: Cluster, _ host: Int, to peer: String) -> Bool {
        cluster.state(of: peer, in: host) == "connected"
    }

    @Test(
        "pair host 4 with host 1 only: hosts 2 and 3 admit it; unpair on host 2: out of all three within 2 s, also after restarts; back only by pairing again"
    )
    func pairIntroduceRemove() async throws {
        let cluster = try Cluster(hosts: 4)
        for host in 1...4 { try cluster.start(host, extra: Self.paired) }
        // Discovered but strangers: nobody connects.
        try await Task.sleep(for: .seconds(2))
        #expect((1...4).allSatisfy { cluster.connectedPeers($0) == 0 }, "strangers connected")
        try await pair(cluster, 2, with: 1)
        try await pair(cluster, 3, with: 1)
        #expect(
            await waitUntil(.seconds(10), every: .milliseconds(50)) {
                (1...3).allSatisfy { cluster.connectedPeers($0) == 2 }
            }, "hosts 1-3 did not mesh on host 1's introductions")
        let ids = try (1...4).map { try cluster.peerID($0) }
        try await pair(cluster, 1, with: 4)
        let admitted = await waitUntil(.seconds(10), every: .milliseconds(50)) {
            (1...3).allSatisfy { isConnected(cluster, $0, to: ids[3]) } && cluster.connectedPeers(4) == 3
        }
        #expect(admitted, "hosts 2 and 3 did not admit host 4 on host 1's word")
        let devices = try cluster.client(2, ["devices"]) as? [[String: Any]] ?? []
        let four = devices.first { $0["peerID"] as? String == ids[3] }
        // Host 1 introduces it, and host 3 re-issues that introduction (docs/wire-format.md 9.6): whichever reaches
        // host 2 first is the one named.
        #expect(four?["trust"] as? String == "introduced", "\(devices)")
        #expect([ids[0], ids[2]].contains(four?["by"] as? String ?? ""), "\(devices)")
        #expect(cluster.peers(2)[ids[3]]?["trust"] as? String == "introduced")
        _ = try cluster.client(4, ["increment", "-n", "10"])
        #expect(await waitUntil(.seconds(5), every: .milliseconds(50)) { cluster.counts(2)?[ids[3]] == 10 })

        // Removed on host 2: out of all three within 2 s.
        let removing = ContinuousClock.now
        _ = try cluster.client(2, ["unpair", ids[3]])
        let out = await waitUntil(.seconds(2), every: .milliseconds(20)) {
            (1...3).allSatisfy { !isConnected(cluster, $0, to: ids[3]) }
        }
        let took = ContinuousClock.now - removing
        print("measured: host 4 out of hosts 1-3 \(took) after unpair on host 2")
        #expect(out, "host 4 still connected 2 s after its removal")
        _ = try? cluster.client(4, ["increment", "-n", "5"])  // counts nowhere but on host 4
        // Restarts of host 4 and of host 1: it stays out.
        cluster.daemons[4]?.stop()
        try cluster.start(4, extra: Self.paired)
        cluster.daemons[1]?.stop()
        try cluster.start(1, extra: Self.paired)
        #expect(
            await waitUntil(.seconds(10), every: .milliseconds(50)) {
                (1...3).allSatisfy { cluster.connectedPeers($0) == 2 }
            })
        try await Task.sleep(for: .seconds(2))
        #expect((1...3).allSatisfy { !isConnected(cluster, $0, to: ids[3]) }, "host 4 got back in after restarts")
        #expect(cluster.counts(2)?[ids[3]] == 10, "what host 4 counted after its removal reached host 2")
        for host in 1...3 {
            let trusted = (try cluster.client(host, ["devices"]) as? [[String: Any]] ?? []).compactMap {
                $0["peerID"] as? String
            }
            #expect(!trusted.contains(ids[3]), "host \(host) still trusts host 4")
        }
        // Pairing again with host 1 lets it back everywhere.
        try await pair(cluster, 1, with: 4)
        #expect(
            await waitUntil(.seconds(10), every: .milliseconds(50)) {
                (1...3).allSatisfy { isConnected(cluster, $0, to: ids[3]) }
            }, "host 4 did not get back in after pairing again")
    }

    @Test(
        "an untrusted device reaches no application and may only ask to pair; a relay in the middle shows two different codes, and no pair is made"
    )
    func strangersAndRelays() async throws {
        let cluster = try Cluster(hosts: 4)
        try cluster.start(1, extra: Self.paired)
        let h1 = try cluster.lab.address(1)
        _ = await waitUntil(.seconds(5), every: .milliseconds(50)) { (try? cluster.peerID(1)) != nil }
        let id1 = try cluster.peerID(1)
        // An untrusted device invites itself and sends what it likes: the link closes, nothing is counted.
        let intruder = try cluster.lab.run(
            4, ["python3", PythonPeer.program, "dial", h1, "47000", "--pings", "3", "--seconds", "10"], timeout: 20)
        let events = PythonPeer.events(intruder.stdout)
        print("measured: untrusted device: \(PythonPeer.first("done", in: events) ?? [:])")
        #expect(PythonPeer.first("handshake", in: events) != nil, "no handshake: \(intruder.stderr)")
        #expect(PythonPeer.first("accepted", in: events) == nil, "an untrusted device was accepted")
        #expect(PythonPeer.first("pongs", in: events)?["count"] as? Int ?? 0 == 0)
        #expect(cluster.peers(1).values.allSatisfy { $0["state"] as? String != "connected" })
        // It may ask to pair: host 1 shows the request with the same code; rejecting it ends it.
        let asking = try cluster.lab.spawn(
            4,
            [
                "python3", PythonPeer.program, "dial", h1, "47000", "--pair", "--no-invite", "--hold", "20",
                "--seconds", "25",
            ])
        defer { asking.stop() }
        let pairing = await asking.waitFor(timeout: 10) { $0["event"] as? String == "pairing" }
        var shown: [String: Any]?
        _ = await waitUntil(.seconds(5), every: .milliseconds(50)) {
            shown = (try? cluster.client(1, ["pairings"]) as? [[String: Any]])?.first
            return shown != nil
        }
        #expect(
            shown?["code"] as? String == pairing?["code"] as? String, "host 1: \(shown ?? [:]), peer: \(pairing ?? [:])"
        )
        if let asker = shown?["peerID"] as? String { _ = try cluster.client(1, ["unpair", asker]) }
        let rejected = await asking.waitFor(timeout: 5) { $0["event"] as? String == "closed" }
        #expect(rejected != nil, "the rejected pairing's link stayed open")
        #expect((try cluster.client(1, ["devices"]) as? [[String: Any]] ?? []).isEmpty)

        // A relay on host 4 between host 2 (which dials it, believing it host 1) and host 1.
        let h4 = try cluster.lab.address(4)
        let relay = try cluster.lab.spawn(
            4, ["python3", PythonPeer.program, "relay", "47100", h1, "47000", "--host", h4, "--seconds", "30"])
        defer { relay.stop() }
        try await Task.sleep(for: .milliseconds(500))
        try cluster.start(2, extra: Self.paired + ["--no-discovery", "--peer", "\(h4):47100"])
        let codes = await relay.waitFor(timeout: 15) { $0["event"] as? String == "relayCodes" }
        var onOne: [String: Any]?
        var onTwo: [String: Any]?
        _ = await waitUntil(.seconds(10), every: .milliseconds(50)) {
            onOne = (try? cluster.client(1, ["pairings"]) as? [[String: Any]])?.first
            onTwo = (try? cluster.client(2, ["pairings"]) as? [[String: Any]])?.first
            return onOne != nil && onTwo != nil
        }
        print(
            "measured: relay codes \(codes ?? [:]); host 1 shows \(onOne?["code"] ?? "-"), host 2 shows \(onTwo?["code"] ?? "-")"
        )
        let codeOne = try #require(onOne?["code"] as? String)
        let codeTwo = try #require(onTwo?["code"] as? String)
        #expect(codeOne != codeTwo, "a relay got the same code on both sides")
        // Neither side sees the other's device: both see the relay's key.
        #expect(onTwo?["peerID"] as? String != id1)
        #expect(onOne?["fingerprint"] as? String == onTwo?["fingerprint"] as? String)
        // The person types the code host 1 shows into host 2: refused, no pair on either side.
        let confirm = try cluster.lab.run(
            2, [Cluster.client, "pair", onTwo?["peerID"] as? String ?? "", "--confirm", codeOne])
        #expect(confirm.status != 0, "host 2 confirmed a code it did not show")
        #expect(confirm.stderr.contains("is not the code shown"), "\(confirm.stderr)")
        #expect((try cluster.client(1, ["devices"]) as? [[String: Any]] ?? []).isEmpty)
        #expect((try cluster.client(2, ["devices"]) as? [[String: Any]] ?? []).isEmpty)
    }

    @Test(
        "impostors: with the secret, or trusted itself, a device that claims a member's peer id is refused and counts nothing"
    )
    func impostors() async throws {
        let cluster = try Cluster(hosts: 4)
        let secret = "/run/lansession-secret"
        for host in [1, 2, 4] {
            _ = try cluster.lab.run(
                host, ["sh", "-c", "umask 077 && printf %s 'the secret of the impostor test..' > \(secret)"])
        }
        try cluster.start(1, extra: ["--secret-file", secret])
        try cluster.start(2, extra: ["--secret-file", secret])
        #expect(await waitUntil(.seconds(10), every: .milliseconds(50)) { cluster.connectedPeers(1) == 1 })
        let id2 = try cluster.peerID(2)
        let h1 = try cluster.lab.address(1)
        let claim = try cluster.lab.run(
            4,
            [
                "python3", PythonPeer.program, "dial", h1, "47000", "--secret-file", secret, "--claim", id2,
                "--seconds", "10",
            ], timeout: 20)
        let events = PythonPeer.events(claim.stdout)
        print("measured: impostor with the secret: \(PythonPeer.first("done", in: events) ?? [:])")
        #expect(PythonPeer.first("handshake", in: events) != nil, "the impostor did not get through Noise")
        #expect(PythonPeer.first("closed", in: events)?["declineReason"] as? Int == 7, "\(events)")
        #expect(PythonPeer.first("accepted", in: events) == nil)
        let counted = cluster.counts(1) ?? [:]
        #expect(Set(counted.keys).isSubset(of: [try cluster.peerID(1), id2]), "\(counted)")

        // Admission paired: a device paired with host 3 (so trusted itself) claims host 3's other member's id.
        try cluster.start(3, extra: Self.paired)
        _ = await waitUntil(.seconds(5), every: .milliseconds(50)) { (try? cluster.peerID(3)) != nil }
        let h3 = try cluster.lab.address(3)
        let key = "/run/impostor-key"
        let asking = try cluster.lab.spawn(
            4,
            [
                "python3", PythonPeer.program, "dial", h3, "47000", "--key-file", key, "--pair", "--confirm",
                "--hold", "3", "--seconds", "20",
            ])
        defer { asking.stop() }
        var shown: [String: Any]?
        _ = await waitUntil(.seconds(10), every: .milliseconds(50)) {
            shown = (try? cluster.client(3, ["pairings"]) as? [[String: Any]])?.first
            return shown != nil
        }
        let peer = try #require(shown?["peerID"] as? String)
        _ = try cluster.client(3, ["pair", peer, "--confirm", shown?["code"] as? String ?? ""])
        #expect(
            await waitUntil(.seconds(5), every: .milliseconds(50)) {
                (try? cluster.client(3, ["devices"]) as? [[String: Any]])?.first?["peerID"] as? String == peer
            }, "the device did not pair")
        asking.stop()
        let trustedClaim = try cluster.lab.run(
            4,
            [
                "python3", PythonPeer.program, "dial", h3, "47000", "--key-file", key, "--claim", id2, "--seconds",
                "10",
            ], timeout: 20)
        let claimed = PythonPeer.events(trustedClaim.stdout)
        print("measured: trusted device claiming another id: \(PythonPeer.first("done", in: claimed) ?? [:])")
        #expect(PythonPeer.first("closed", in: claimed)?["declineReason"] as? Int == 7, "\(claimed)")
        #expect(PythonPeer.first("accepted", in: claimed) == nil)
        #expect(cluster.peers(3)[id2] == nil, "host 3 keeps a record of the claimed id")
    }

    @Test(
        "a full disk while saving the trusted set: the pairing is refused with the reason, the file keeps the previous set"
    )
    func fullDisk() async throws {
        let cluster = try Cluster(hosts: 3)
        let small = "/run/small"
        let mounted = try cluster.lab.run(
            1, ["sh", "-c", "mkdir -p \(small) && mount -t tmpfs -o size=256k tmpfs \(small)"])
        #expect(mounted.status == 0, "\(mounted.stderr)")
        try cluster.start(1, stateDirectory: "\(small)/state", extra: Self.paired)
        try cluster.start(2, extra: Self.paired)
        try cluster.start(3, extra: Self.paired)
        let up = await waitUntil(.seconds(10), every: .milliseconds(50)) {
            cluster.connectedPeers(1) == 0 && (try? cluster.peerID(1)) != nil
        }
        #expect(up, "host 1: \(cluster.daemons[1]?.stderr ?? "")")
        try await pair(cluster, 2, with: 1)
        let file = "\(small)/state/trusted-devices.json"
        let before = try cluster.lab.run(1, ["cat", file]).stdout
        #expect(before.contains(try cluster.peerID(2)))
        // Fill the disk, then pair host 3: host 1 confirms last, cannot save, and says so.
        _ = try cluster.lab.run(1, ["sh", "-c", "dd if=/dev/zero of=\(small)/fill bs=4k 2>/dev/null; true"])
        let id1 = try cluster.peerID(1)
        let id3 = try cluster.peerID(3)
        var asked: [String: Any]?
        _ = await waitUntil(.seconds(15), every: .milliseconds(100)) {
            asked = (try? cluster.client(1, ["pair", id3]) as? [String: Any])?["pairing"] as? [String: Any]
            return asked != nil
        }
        let code = try #require(asked?["code"] as? String)
        _ = await waitUntil(.seconds(5), every: .milliseconds(50)) {
            (try? cluster.client(3, ["pairings"]) as? [[String: Any]])?.isEmpty == false
        }
        _ = try cluster.client(3, ["pair", id1, "--confirm", code])
        let refused = try cluster.lab.run(1, [Cluster.client, "pair", id3, "--confirm", code])
        print("measured: pairing on a full disk: exit \(refused.status), \(refused.stderr)")
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("No space left on device"), "\(refused.stderr)")
        #expect(try cluster.lab.run(1, ["cat", file]).stdout == before, "the trusted set changed")
        #expect(try cluster.lab.run(1, ["ls", "\(small)/state"]).stdout.contains(".new") == false)
        let devices = (try cluster.client(1, ["devices"]) as? [[String: Any]] ?? []).compactMap {
            $0["peerID"] as? String
        }
        #expect(devices == [try cluster.peerID(2)])
        #expect(
            await waitUntil(.seconds(5), every: .milliseconds(50)) {
                (try? cluster.client(3, ["devices"]) as? [[String: Any]])?.isEmpty == true
            }, "host 3 trusts host 1 although host 1 could not save the pair")
        // Room again: the same pairing succeeds.
        _ = try cluster.lab.run(1, ["rm", "-f", "\(small)/fill"])
        try await pair(cluster, 1, with: 3)
        #expect(
            await waitUntil(.seconds(10), every: .milliseconds(50)) {
                cluster.connectedPeers(1) == 2 && cluster.connectedPeers(3) == 2
            })
        _ = try? cluster.lab.run(1, ["umount", "-l", small])
    }
}
