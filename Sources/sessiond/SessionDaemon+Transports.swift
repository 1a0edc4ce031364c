import BubblesAndCounter
import LanSession
import LanSessionLE
import LanSessionRFCOMM
import Logging
import NIOPosix
import ServiceLifecycle

/// Which transports the daemon runs (`--transport`), and the Bluetooth peers it dials.
extension SessionDaemon {
    /// The transports asked for. With `all`, a machine without Bluetooth carries on with the LAN (a notice says so);
    /// asked for by name, a transport that cannot start stops the daemon.
    static func makeTransports(_ wanted: DaemonConfiguration.Transports, logger: Logger) throws -> [any Transport] {
        var transports: [any Transport] = wanted.lan ? [LANTransport()] : []
        var bluetooth = true
        if wanted.rfcomm {
            do {
                transports.append(try RFCOMMTransport(adapter: wanted.adapter, channel: wanted.rfcommChannel))
            } catch {
                guard wanted.bluetoothOptional else { throw error }
                bluetooth = false
                logger.notice("no Bluetooth: \(error.message); carrying on with LAN only")
            }
        }
        if wanted.le && bluetooth {
            transports.append(try L2CAPTransport(adapter: wanted.adapter, psm: wanted.lePSM))
        }
        return transports
    }

    /// The services of the Bluetooth transports that run: RFCOMM's service record, LE's GATT face and, unless
    /// `--no-discovery`, LE discovery.
    static func bluetoothServices(
        _ configuration: DaemonConfiguration, on transports: [any Transport], session: Session,
        app: BubblesAndCounterApp, state: BluetoothState, operatorLog: OperatorLog, logger: Logger
    ) -> [ServiceGroupConfiguration.ServiceConfiguration] {
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if let rfcomm = transports.first(where: { $0 is RFCOMMTransport }) as? RFCOMMTransport {
            services.append(.init(service: RFCOMMRecordService(transport: rfcomm, logger: logger)))
        }
        guard let le = transports.first(where: { $0 is L2CAPTransport }) as? L2CAPTransport else { return services }
        services.append(
            .init(
                service: GATTService(
                    adapter: le.adapter, session: session, app: app, loop: loop, state: state, logger: logger)))
        if configuration.leDiscovery {
            services.append(
                .init(
                    service: LEDiscovery(
                        session: session, adapter: le.adapter, psm: le.psm, eventLoop: loop, logger: logger
                    ) { operatorLog.record(leDiscovery: $0) }))
            logger.info("LE discovery on \(le.adapter.name) (\(le.adapter.address), PSM \(le.psm))")
        }
        return services
    }

    /// Dials the `--bt-peer` and `--le-peer` addresses on the transports that run. A `--bt-peer` without a channel is
    /// dialled on the channel its SDP record names (docs/wire-format.md 4.4), or `--bt-channel` when it has none.
    static func dialBluetoothPeers(
        _ configuration: DaemonConfiguration, of session: Session, on transports: [any Transport], logger: Logger
    ) async throws {
        if let rfcomm = transports.first(where: { $0.name == RFCOMMTransport.name }) as? RFCOMMTransport {
            for peer in configuration.bluetoothPeers {
                var endpoint = peer.endpoint
                if !peer.channelGiven {
                    endpoint.port = await recordedChannel(
                        of: endpoint.host, from: rfcomm.adapter.address, otherwise: endpoint.port, logger: logger)
                }
                try await session.connect(to: endpoint)
            }
        }
        if transports.contains(where: { $0.name == L2CAPTransport.name }) {
            for peer in configuration.lePeers { try await session.connect(to: peer) }
        }
    }

    /// The RFCOMM channel of LanSession's SDP record on the device at `address`, looked up off the loop for at most
    /// `SDPLookup`'s own connection timeout; `otherwise` when the device has no SDP server or no record.
    static func recordedChannel(
        of address: String, from adapter: String, otherwise channel: Int, logger: Logger
    ) async -> Int {
        let found = try? await NIOThreadPool.singleton.runIfActive {
            try SDPLookup.channel(of: address, from: adapter)
        }
        guard let found = found ?? nil, RFCOMMTransport.channels.contains(found) else {
            logger.info("no LanSession record in the SDP database of \(address): dialling channel \(channel)")
            return channel
        }
        logger.info("\(address) names RFCOMM channel \(found) in its SDP record")
        return found
    }

    /// "ADDRESS[/CHANNEL]" as an RFCOMM endpoint.
    static func bluetoothEndpoint(_ text: String, defaultChannel: Int) -> Endpoint? {
        bluetoothEndpoint(
            text, transport: RFCOMMTransport.name, defaultPort: defaultChannel, in: RFCOMMTransport.channels)
    }

    /// "ADDRESS[/PSM]" as an LE L2CAP endpoint.
    static func leEndpoint(_ text: String, defaultPSM: Int) -> Endpoint? {
        bluetoothEndpoint(text, transport: L2CAPTransport.name, defaultPort: defaultPSM, in: L2CAPTransport.psms)
    }

    /// "ADDRESS[/PORT]" as an endpoint of a Bluetooth transport, PORT (or `defaultPort`) in `ports`.
    private static func bluetoothEndpoint(
        _ text: String, transport: String, defaultPort: Int, in ports: ClosedRange<Int>
    ) -> Endpoint? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts[0].utf8.count == 17,
            parts[0].split(separator: ":").count == 6,
            parts[0].split(separator: ":").allSatisfy({ $0.count == 2 && UInt8($0, radix: 16) != nil })
        else { return nil }
        let port = parts.count == 2 ? Int(parts[1]) : defaultPort
        guard let port, ports.contains(port) else { return nil }
        return Endpoint(transport: transport, host: parts[0].uppercased(), port: port)
    }
}
