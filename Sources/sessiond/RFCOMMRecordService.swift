import DBusClient
import LanSessionBlueZ
import LanSessionRFCOMM
import Logging
import ServiceLifecycle

/// Where bluetoothd runs, LanSession's RFCOMM service in the adapter's SDP database (``BlueZProfile``, docs/wire-format.md
/// 4.4) for as long as the daemon runs, so that `sdptool browse` and peers dialling without a channel find it. Without
/// bluetoothd there is no SDP server to announce it in; peers then dial the channel they are given.
struct RFCOMMRecordService: Service {
    let transport: RFCOMMTransport
    let logger: Logger

    func run() async throws {
        guard let bus = try? BusConnection.system(logger: logger) else {
            logger.debug("no system bus: no SDP record")
            return try await gracefulShutdown()
        }
        defer { bus.close() }
        guard (try? await bus.nameHasOwner("org.bluez")) == true else {
            logger.debug("no bluetoothd: no SDP record")
            return try await gracefulShutdown()
        }
        let profile = BlueZProfile(bus: bus, channel: transport.channel, logger: logger)
        do {
            try await profile.start()
            logger.info("RFCOMM service record in bluetoothd's SDP database: channel \(transport.channel)")
        } catch {
            logger.notice("no RFCOMM service record through bluetoothd: \(error.message)")
            return try await gracefulShutdown()
        }
        try? await gracefulShutdown()
        await profile.close()
    }
}
