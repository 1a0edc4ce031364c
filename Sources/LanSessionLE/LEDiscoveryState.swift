import LanSession

/// LE discovery as plain values: what to send the kernel's management interface, and which peers were found or
/// lost, for each event it reports and each tick of a clock. ``LEDiscovery`` carries the actions out.
///
/// It advertises first (Read Advertising Features picks the instance: the controller's last, so that it stays clear
/// of bluetoothd's, which start at 1), then scans for LE devices. The kernel ends a scan after about 10 s, and a
/// controller reports a device only once per scan: the scan is therefore stopped and started again every
/// ``Configuration/rescanInterval``, and a device not reported for ``Configuration/lostAfter`` is lost. Commands go one
/// at a time: the next once the kernel answered the last.
struct LEDiscoveryState {
    struct Configuration: Sendable {
        /// This node, whose own advertisement (seen through another controller of the machine) is ignored.
        var localPeer: PeerID
        /// The advertisement this node makes.
        var advertisement: LEAdvertisement
        /// How long a scan runs before it is started anew.
        var rescanInterval: Duration = .seconds(3)
        /// How long a device may go unreported before it is lost.
        var lostAfter: Duration = .seconds(10)
        /// How long the node with the higher peer id waits before it dials a device it found: the lower dials at
        /// once. Controllers stop advertising while they initiate a connection, so two nodes that dial each other at
        /// the same moment may both miss, again and again.
        var dialDeferral: Duration = .seconds(4)
    }

    /// A device that advertises a LanSession node of this session.
    struct Sighting: Hashable {
        var peer: PeerID
        var psm: Int
        var firstSeen: ContinuousClock.Instant
        var lastSeen: ContinuousClock.Instant
        /// Whether the session was told (at once by the lower peer id, after ``Configuration/dialDeferral`` by the
        /// higher).
        var told: Bool
    }

    /// What to do.
    enum Action: Hashable {
        /// Send this command.
        case send(ManagementPacket.Command)
        /// A peer advertises at this endpoint (record: the device's address as `le:ADDRESS`).
        case discovered(PeerID, Endpoint, record: String)
        /// The device of this record is no longer seen.
        case vanished(record: String)
        /// Tell the operator (once per cause).
        case report(String)
    }

    let configuration: Configuration
    /// Sightings by address (text, most significant byte first).
    private(set) var sightings: [String: Sighting] = [:]
    /// The advertising instance, once chosen.
    private(set) var instance: UInt8?
    /// Whether the advertisement is up.
    private(set) var isAdvertising = false
    /// When the running scan started; nil when none runs.
    private(set) var scanStarted: ContinuousClock.Instant?
    /// A scan is wanted (once started).
    private var wantsScan = false
    /// The command sent and not yet answered.
    private var outstanding: ManagementPacket.Command?
    private var queue: [ManagementPacket.Command] = []
    /// Causes already reported.
    private var reported: Set<String> = []

    init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    // MARK: - Inputs

    /// Starts: advertising features first, then the advertisement, then the scan.
    mutating func start() -> [Action] {
        wantsScan = true
        queue.append(.readAdvertisingFeatures)
        return next()
    }

    /// The commands that end it: the advertisement removed, the scan stopped. Written as the last thing, they need
    /// no answer.
    var stopCommands: [ManagementPacket.Command] {
        var commands: [ManagementPacket.Command] = []
        if let instance, isAdvertising { commands.append(.removeAdvertising(instance: instance)) }
        commands.append(.stopDiscovery(addressTypes: ManagementPacket.AddressTypes.le))
        return commands
    }

    /// An event of the management interface.
    mutating func receive(_ event: ManagementPacket.Event, now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        switch event {
        case .commandComplete(let opcode, let status, let parameters):
            guard let command = outstanding, command.opcode == opcode else { return [] }
            outstanding = nil
            actions += answered(command, status: status, parameters: parameters, now: now)
        case .commandStatus(let opcode, let status):
            guard let command = outstanding, command.opcode == opcode else { return [] }
            outstanding = nil
            actions += answered(command, status: status, parameters: [], now: now)
        case .discovering(let on):
            if !on {
                scanStarted = nil
                let start = ManagementPacket.Command.startDiscovery(addressTypes: ManagementPacket.AddressTypes.le)
                if wantsScan && outstanding != start && !queue.contains(start) { queue.append(start) }
            }
        case .deviceFound(let address, let type, _, let data):
            actions += found(address: address, type: type, data: data, now: now)
        case .other:
            break
        }
        return actions + next()
    }

    /// The clock: lost devices, a scan due to start anew.
    mutating func tick(now: ContinuousClock.Instant) -> [Action] {
        var actions: [Action] = []
        for (address, sighting) in sightings.sorted(by: { $0.key < $1.key })
        where now - sighting.lastSeen >= configuration.lostAfter {
            sightings[address] = nil
            if sighting.told { actions.append(.vanished(record: Self.record(address))) }
        }
        for (address, sighting) in sightings.sorted(by: { $0.key < $1.key })
        where !sighting.told && now - sighting.firstSeen >= configuration.dialDeferral {
            sightings[address]?.told = true
            actions.append(Self.discovered(sighting, at: address))
        }
        if wantsScan, outstanding == nil, queue.isEmpty {
            if let started = scanStarted {
                if now - started >= configuration.rescanInterval {
                    queue.append(.stopDiscovery(addressTypes: ManagementPacket.AddressTypes.le))
                }
            } else if instance != nil || isAdvertising || reported.contains("advertising") {
                queue.append(.startDiscovery(addressTypes: ManagementPacket.AddressTypes.le))
            }
        }
        return actions + next()
    }

    // MARK: - Answers and sightings

    private mutating func answered(
        _ command: ManagementPacket.Command, status: UInt8, parameters: [UInt8], now: ContinuousClock.Instant
    ) -> [Action] {
        let failed = status != 0
        switch command {
        case .readAdvertisingFeatures:
            // Supported flags (4), data and scan response limits (1 + 1), most instances (1), instances in use...
            guard !failed, parameters.count >= 8, parameters[6] > 0 else {
                return failure("advertising", "cannot read the controller's advertising features", status)
                    + startScan()
            }
            let chosen = parameters[6]
            instance = chosen
            let advertisement = configuration.advertisement
            queue.append(
                .addAdvertising(
                    instance: chosen,
                    // Connectable, not discoverable: the kernel adds no flags field (LEAdvertisement says why).
                    flags: ManagementPacket.AdvertisingFlags.connectable,
                    data: advertisement.advertisingData, scanResponse: advertisement.scanResponse))
            return []
        case .addAdvertising:
            guard !failed else { return failure("advertising", "cannot advertise", status) + startScan() }
            isAdvertising = true
            return startScan()
        case .removeAdvertising:
            isAdvertising = false
            return []
        case .startDiscovery:
            if failed {
                // Busy: a connection is being made, or another scan runs; the next tick tries again. Any other
                // refusal (no permission, not powered, not supported) stays: no more scans are asked for.
                guard status != ManagementPacket.busy else { return [] }
                wantsScan = false
                return failure("scan", "cannot scan", status)
            }
            scanStarted = now
            return []
        case .stopDiscovery:
            scanStarted = nil
            if wantsScan { queue.append(.startDiscovery(addressTypes: ManagementPacket.AddressTypes.le)) }
            return []
        }
    }

    private mutating func startScan() -> [Action] {
        guard wantsScan, scanStarted == nil else { return [] }
        queue.append(.startDiscovery(addressTypes: ManagementPacket.AddressTypes.le))
        return []
    }

    private mutating func failure(_ cause: String, _ what: String, _ status: UInt8) -> [Action] {
        if cause == "advertising" { reported.insert("advertising") }
        guard reported.insert("\(cause) \(status)").inserted else { return [] }
        let hint = status == ManagementPacket.permissionDenied ? " (LE discovery needs CAP_NET_ADMIN)" : ""
        return [.report("LE discovery: \(what): \(ManagementPacket.statusText(status))\(hint)")]
    }

    private mutating func found(
        address: [UInt8], type: UInt8, data: [UInt8], now: ContinuousClock.Instant
    ) -> [Action] {
        // The transport dials public addresses; a node advertises its controller's public address.
        guard address.count == 6, type == ManagementPacket.AddressType.lePublic,
            let advertisement = LEAdvertisement(data: data),
            advertisement.sessionTag == configuration.advertisement.sessionTag,
            advertisement.peerID != configuration.localPeer
        else { return [] }
        let text = LEAdvertisement.addressText(address)
        if var sighting = sightings[text], sighting.peer == advertisement.peerID, sighting.psm == advertisement.psm {
            sighting.lastSeen = now
            sightings[text] = sighting
            return []
        }
        var actions: [Action] = []
        if sightings[text]?.told == true { actions.append(.vanished(record: Self.record(text))) }
        let lower = configuration.localPeer < advertisement.peerID
        let sighting = Sighting(
            peer: advertisement.peerID, psm: advertisement.psm, firstSeen: now, lastSeen: now, told: lower)
        sightings[text] = sighting
        if lower { actions.append(Self.discovered(sighting, at: text)) }
        return actions
    }

    private static func discovered(_ sighting: Sighting, at address: String) -> Action {
        .discovered(
            sighting.peer, Endpoint(transport: L2CAPTransport.name, host: address, port: sighting.psm),
            record: record(address))
    }

    /// The record of a device's address, for the session.
    static func record(_ address: String) -> String { "le:\(address)" }

    /// The next command, when none is outstanding.
    private mutating func next() -> [Action] {
        guard outstanding == nil, !queue.isEmpty else { return [] }
        let command = queue.removeFirst()
        outstanding = command
        return [.send(command)]
    }
}
