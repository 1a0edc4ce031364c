import LanSession
import Testing

@testable import LanSessionLE

@Suite("LE discovery")
struct LEDiscoveryStateTests {
    static let local = PeerID(0x0102_0304_0506_0708)
    static let other = PeerID(0x1122_3344_5566_7788)
    static let tag = LEAdvertisement.sessionTag("lab")
    static let le = ManagementPacket.AddressTypes.le

    static func state() -> LEDiscoveryState {
        LEDiscoveryState(
            .init(localPeer: local, advertisement: LEAdvertisement(peerID: local, psm: 0xC5, sessionTag: tag)))
    }

    /// Device Found for `peer` at 00:AA:01:01:00:01 (kernel order: least significant byte first).
    static func found(_ peer: PeerID, tag: UInt32 = tag, type: UInt8 = 1) -> ManagementPacket.Event {
        let advertisement = LEAdvertisement(peerID: peer, psm: 0x94, sessionTag: tag)
        return .deviceFound(
            address: [0x01, 0x00, 0x01, 0x01, 0xAA, 0x00], addressType: type, rssi: -40,
            data: advertisement.advertisingData + advertisement.scanResponse)
    }

    @Test("the advertisement and its service data: golden bytes, read back, 31 bytes at most with the flags")
    func advertisement() throws {
        let advertisement = LEAdvertisement(peerID: Self.other, psm: 0x94, sessionTag: Self.tag)
        #expect(Self.tag == 0x60_92F4)  // FNV-1a (32-bit) of "lab" is 0x626092F4
        let uuid: [UInt8] = [0xA0, 0, 0, 0, 0, 0, 0x4E, 0x4F, 0x49, 0x53, 0x53, 0x45, 0x53, 0x4E, 0x41, 0x4C]
        // No flags field: a central then connects over LE.
        #expect(advertisement.advertisingData == [0x11, 0x07] + uuid)
        #expect(
            advertisement.scanResponse
                == [0x1E, 0x21] + uuid + [0x01, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 0x94, 0x60, 0x92, 0xF4])
        #expect(advertisement.scanResponse.count == 31 && advertisement.advertisingData.count <= 31)
        #expect(LEAdvertisement(data: advertisement.advertisingData + advertisement.scanResponse) == advertisement)
        #expect(LEAdvertisement(data: advertisement.advertisingData) == nil)
        // Truncated, another version, a PSM out of range: nothing.
        #expect(LEAdvertisement(data: Array(advertisement.scanResponse.dropLast())) == nil)
        var version = advertisement.scanResponse
        version[18] = 2
        #expect(LEAdvertisement(data: version) == nil)
        var psm = advertisement.scanResponse
        psm[27] = 0x20
        #expect(LEAdvertisement(data: psm) == nil)
    }

    @Test("management packets: Add Advertising's golden bytes; events read back, other controllers' ignored")
    func packets() throws {
        let add = ManagementPacket.Command.addAdvertising(
            instance: 5, flags: 3, data: [0xAA], scanResponse: [0xBB, 0xCC])
        #expect(
            add.encoded(index: 1)
                == [0x3E, 0x00, 0x01, 0x00, 0x0E, 0x00, 0x05, 0x03, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x02, 0xAA, 0xBB, 0xCC])
        #expect(ManagementPacket.Command.startDiscovery(addressTypes: 6).encoded(index: 0) == [0x23, 0, 0, 0, 1, 0, 6])
        let complete: [UInt8] = [0x01, 0x00, 0x01, 0x00, 0x04, 0x00, 0x3E, 0x00, 0x00, 0x05]
        #expect(
            ManagementPacket.Event(complete, index: 1)
                == .commandComplete(opcode: 0x3E, status: 0, parameters: [5]))
        #expect(ManagementPacket.Event(complete, index: 0) == nil)
        #expect(ManagementPacket.Event(complete.dropLast(), index: 1) == nil)
        #expect(ManagementPacket.Event([0x13, 0, 0, 0, 2, 0, 6, 0], index: 0) == .discovering(false))
        let found: [UInt8] = [0x12, 0, 0, 0, 16, 0, 1, 2, 3, 4, 5, 6, 1, 0xD8, 0, 0, 0, 0, 2, 0, 0x01, 0x06]
        #expect(
            ManagementPacket.Event(found, index: 0)
                == .deviceFound(address: [1, 2, 3, 4, 5, 6], addressType: 1, rssi: -40, data: [0x01, 0x06]))
    }

    @Test("advertise on the controller's last instance, then scan; a peer found is dialled, lost after the timeout")
    func lifecycle() {
        var state = Self.state()
        let t0 = ContinuousClock.now
        #expect(state.start() == [.send(.readAdvertisingFeatures)])
        // Features: flags, 31, 31, 5 instances, 0 in use.
        let features = state.receive(
            .commandComplete(opcode: 0x3D, status: 0, parameters: [0, 0, 0, 0, 31, 31, 5, 0]), now: t0)
        guard case .send(.addAdvertising(let instance, let flags, _, let response)) = features.first else {
            Issue.record("no Add Advertising: \(features)")
            return
        }
        #expect(instance == 5 && flags == 1 && LEAdvertisement(data: response)?.peerID == Self.local)
        #expect(
            state.receive(.commandComplete(opcode: 0x3E, status: 0, parameters: [5]), now: t0)
                == [.send(.startDiscovery(addressTypes: Self.le))])
        #expect(state.receive(.commandComplete(opcode: 0x23, status: 0, parameters: [6]), now: t0) == [])
        // Its own advertisement, another session's, a random address: nothing.
        #expect(state.receive(Self.found(Self.local), now: t0) == [])
        #expect(state.receive(Self.found(Self.other, tag: 0x123456), now: t0) == [])
        #expect(state.receive(Self.found(Self.other, type: 2), now: t0) == [])
        let record = "le:00:AA:01:01:00:01"
        #expect(
            state.receive(Self.found(Self.other), now: t0)
                == [
                    .discovered(
                        Self.other, Endpoint(transport: "le", host: "00:AA:01:01:00:01", port: 0x94), record: record)
                ])
        // Seen again: nothing new.
        #expect(state.receive(Self.found(Self.other), now: t0 + .seconds(1)) == [])
        // The scan is started anew after 3 s.
        #expect(state.tick(now: t0 + .seconds(3)) == [.send(.stopDiscovery(addressTypes: Self.le))])
        #expect(
            state.receive(.commandComplete(opcode: 0x24, status: 0, parameters: [6]), now: t0 + .seconds(3))
                == [.send(.startDiscovery(addressTypes: Self.le))])
        // The kernel's own "stopped" while the start is out adds no second start.
        #expect(state.receive(.discovering(false), now: t0 + .seconds(3)) == [])
        #expect(state.receive(.commandComplete(opcode: 0x23, status: 0, parameters: [6]), now: t0 + .seconds(3)) == [])
        // Not seen for 10 s after the last sighting: lost.
        #expect(!state.tick(now: t0 + .milliseconds(10_900)).contains(.vanished(record: record)))
        #expect(state.tick(now: t0 + .seconds(11)) == [.vanished(record: record)])
        #expect(state.sightings.isEmpty)
        #expect(state.stopCommands == [.removeAdvertising(instance: 5), .stopDiscovery(addressTypes: Self.le)])
    }

    @Test("of two nodes that find each other, the higher peer id tells its session only after the deferral")
    func deferral() {
        var state = LEDiscoveryState(
            .init(
                localPeer: Self.other,
                advertisement: LEAdvertisement(peerID: Self.other, psm: 0x94, sessionTag: Self.tag)))
        let t0 = ContinuousClock.now
        #expect(state.receive(Self.found(Self.local), now: t0) == [])
        #expect(state.receive(Self.found(Self.local), now: t0 + .seconds(2)) == [])
        #expect(
            !state.tick(now: t0 + .milliseconds(3_900)).contains { if case .discovered = $0 { true } else { false } })
        #expect(
            state.tick(now: t0 + .seconds(4)).contains(
                .discovered(
                    Self.local, Endpoint(transport: "le", host: "00:AA:01:01:00:01", port: 0x94),
                    record: "le:00:AA:01:01:00:01")))
        // A device lost before the deferral ran out was never told, so nothing vanishes.
        var configuration = LEDiscoveryState.Configuration(
            localPeer: Self.other, advertisement: LEAdvertisement(peerID: Self.other, psm: 0x94, sessionTag: Self.tag))
        configuration.dialDeferral = .seconds(30)
        var early = LEDiscoveryState(configuration)
        _ = early.receive(Self.found(Self.local), now: t0)
        #expect(!early.tick(now: t0 + .seconds(10)).contains(.vanished(record: "le:00:AA:01:01:00:01")))
        #expect(early.sightings.isEmpty)
    }

    @Test("a busy controller is asked again at the next tick; a refusal is reported once, the scan still runs")
    func failures() {
        var state = Self.state()
        let t0 = ContinuousClock.now
        _ = state.start()
        let refused = state.receive(.commandStatus(opcode: 0x3D, status: 0x14), now: t0)
        #expect(refused.count == 2)
        #expect(refused.last == .send(.startDiscovery(addressTypes: Self.le)))
        guard case .report(let text) = refused.first else {
            Issue.record("no report: \(refused)")
            return
        }
        #expect(text.contains("permission denied") && text.contains("CAP_NET_ADMIN"))
        #expect(state.receive(.commandStatus(opcode: 0x23, status: 0x0A), now: t0) == [])
        #expect(state.tick(now: t0 + .milliseconds(500)) == [.send(.startDiscovery(addressTypes: Self.le))])
        #expect(state.stopCommands == [.stopDiscovery(addressTypes: Self.le)])
        // Refused for lack of permission: reported once, and not asked again.
        let denied = state.receive(.commandStatus(opcode: 0x23, status: 0x14), now: t0 + .seconds(1))
        #expect(denied.count == 1 && state.tick(now: t0 + .seconds(2)).isEmpty)
    }
}
