import Foundation
import LanSession
import LanSessionRFCOMM
import SessionControl
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

extension Check {
    /// The GATT face under BlueZ's bluetoothd (a boot of scripts/btlab with --bluetoothd), from a central that is not
    /// ours: Python's bleak on hci0 (Tests/BluetoothLab/gatt_central.py), against a daemon on hci1 that registers its
    /// face with bluetoothd's GattManager1 and advertises LanSession's service (section 4.3). The central finds the
    /// daemon by its service UUID, reads the identity, writes a pick-up, a move and 5 increments (write without
    /// response), writes a value that is no command (which changes nothing), receives notifications of the counts
    /// and moves the daemon's user makes, and times GATT round trips (an increment, then its counterState).
    func bluezFace(_ hci0: RFCOMMTransport.Adapter, _ hci1: RFCOMMTransport.Adapter) async throws -> [Outcome] {
        let environment = ProcessInfo.processInfo.environment
        guard environment["BTLAB_BLUETOOTHD"] == "1" else {
            return [
                Outcome(
                    check: "BlueZ: bluetoothd", passed: false,
                    detail: "this boot runs no bluetoothd: scripts/btlab run --bluetoothd")
            ]
        }
        let tools = environment["BTLAB_TOOLS"] ?? ""
        let bluetoothdLog = (environment["BTLAB_OUT"] ?? "/mnt") + "/bluetoothd.log"
        let daemon = try Daemon(
            "gatt", ["--transport", "le", "--bt-adapter", "hci1", "--le-psm", "\(0x95)"], discovery: true)
        defer { daemon.stop() }
        guard await waitUntil(.seconds(30), every: .milliseconds(100), { daemon.peerID != nil }),
            let id = daemon.peerID
        else {
            daemon.stop()
            return [
                Outcome(
                    check: "BlueZ: the daemon", passed: false,
                    detail: "sessiond did not start: \(daemon.process.stderr.suffix(600))")
            ]
        }

        // The daemon says that bluetoothd serves its face.
        let throughBluetoothd = await waitUntil(.seconds(10), every: .milliseconds(100)) {
            daemon.call(ControlCommand.status, as: StatusResult.self)?.gattFace == "bluetoothd"
        }
        guard throughBluetoothd else {
            return [
                Outcome(
                    check: "BlueZ: the daemon's GATT face through bluetoothd", passed: false,
                    detail: "status says gattFace "
                        + "\(daemon.call(ControlCommand.status, as: StatusResult.self)?.gattFace ?? "none")"
                )
            ]
        }

        // The central, with bluetoothctl on its PATH (bleak asks it for BlueZ's version). It scans and connects
        // within 30 s, then listens until told on stdin (or 40 s), then times 100 round trips.
        let script = FileManager.default.currentDirectoryPath + "/Tests/BluetoothLab/gatt_central.py"
        let path = "\(tools)/root/usr/bin:" + (environment["PATH"] ?? "/usr/bin:/bin")
        let roundTrips = 100
        let central = try HostProcess.local([
            "/usr/bin/env", "PATH=\(path)", "/usr/bin/python3", script, "hci0", hci1.address, "30", "--listen", "40",
            "--round-trips", "\(roundTrips)",
        ])
        defer { central.stop() }
        /// What went wrong, from every side: the central's last lines, what sessiond and bluetoothd logged.
        func diagnosis() -> String {
            let printed = central.events.suffix(4).map { event in
                (try? JSONSerialization.data(withJSONObject: event, options: [.sortedKeys]))
                    .map { String(decoding: $0, as: UTF8.self) } ?? "?"
            }
            let words = ["gatt", "bluez", "bluetoothd", "advertis", "d-bus", "dbus", "sd-bus", "error", "fail"]
            let daemonLines = daemon.process.stderr.split(separator: "\n").filter { line in
                words.contains { line.lowercased().contains($0) }
            }
            let bluetoothd = (try? String(contentsOfFile: bluetoothdLog, encoding: .utf8)) ?? ""
            let bluetoothdLines = bluetoothd.split(separator: "\n").filter { line in
                ["gatt-database", "advertising", "connect_failed", "bonding_attempt_complete", "error", "Failed"]
                    .contains { line.contains($0) }
            }
            // Whether bluetoothd still runs, and the kernel's BUG if there was one (Debian 12's 6.1 corrupts its list
            // of links in hci_chan_del when a failed connection's socket closes, and bluetoothd dies of it).
            let probe = try? HostProcess.local([
                "/bin/sh", "-c",
                "(pidof bluetoothd >/dev/null && echo running || echo 'not running';"
                    + " dmesg | grep -E 'kernel BUG|corruption' | head -n 2) >&2",
            ])
            for _ in 0..<200 where probe?.isRunning == true || probe?.stderr.isEmpty == true { usleep(10_000) }
            let state = (probe?.stderr ?? "?").split(separator: "\n").joined(separator: "; ")
            // A connection that failed with type 0 was BR/EDR: bluetoothd dials a device whose advertising flags do
            // not say "BR/EDR not supported" over BR/EDR, where hci1 does not page-scan under bluetoothd.
            let bredr = bluetoothdLines.contains {
                $0.contains("bonding_attempt_complete() hci0") && $0.contains("type 0")
            }
            return "central printed \(printed.joined(separator: " "))"
                + (central.isRunning ? "" : ", exited \(central.exitStatus): \(central.stderr.suffix(400))")
                + "; sessiond "
                + (daemon.process.isRunning
                    ? "running" : "exited: \(daemonLines.suffix(6).joined(separator: " | "))")
                + "; bluetoothd \(state): \(bluetoothdLines.suffix(6).joined(separator: " | "))"
                + (bredr
                    ? " (bluetoothd dialled hci1 over BR/EDR: the advertisement's flags, if any, must say BR/EDR not"
                        + " supported, or carry none, for a BlueZ central to connect over LE)"
                    : "")
        }
        func failed(_ key: String) -> ([String: Any]) -> Bool { { $0[key] != nil || $0["error"] != nil } }

        // Found by UUID, connected, the identity read.
        let found = await central.waitFor(timeout: 45, failed("found_after_s"))
        let identityEvent = await central.waitFor(timeout: 20, failed("identity"))
        let identity = identityEvent?["identity"] as? String
        let named = identity?.hasPrefix("peer \(id) \"gatt\" session \"lab\" fingerprint ") == true
        var outcomes = [
            Outcome(
                check: "BlueZ: bleak finds the daemon by its service UUID and reads the identity",
                passed: found?["found_after_s"] != nil && named,
                detail: found?["found_after_s"] == nil
                    ? "not found: \(diagnosis())"
                    : "found after \(found?["found_after_s"] ?? "?") s, service data \(found?["service_data"] ?? "?"); "
                        + "connected at attempt \(central.events.first { $0["connect_attempts"] != nil }?["connect_attempts"] ?? "?"); "
                        + "identity \(identity.map { "\"\($0)\"" } ?? "not read: \(diagnosis())")")
        ]
        guard identity != nil else { return outcomes }

        // The central subscribes, then writes (without response) a pick-up, a move and 5 increments, then a write
        // that is no command (with response).
        let subscribed =
            (await central.waitFor(timeout: 20, failed("subscribed"))?["subscribed"] as? NSNumber)?.boolValue == true
        let badWrite = await central.waitFor(timeout: 20, failed("bad_write_error"))
        let moved = await daemon.heldAtTheCentralsMove(by: id)
        func local() -> UInt64? { daemon.localCount }
        let counted = await waitUntil(.seconds(10), every: .milliseconds(100)) { local() == 5 }
        outcomes.append(
            Outcome(
                check: "BlueZ: a central's pick-up, move and increment act as the device's user",
                passed: subscribed && moved && counted,
                detail: "subscribed \(subscribed); bubble 0 held and at (100.5, -20.25) \(moved); count 5 \(counted) "
                    + "(at \(local().map(String.init) ?? "?"))" + (moved && counted ? "" : "; \(diagnosis())")))
        // bluetoothd (5.66, and BlueZ since) answers a write request itself, with success, when the characteristic
        // also takes writes without response (as the command does, for phones), and calls WriteValue without waiting
        // for its reply: the daemon's refusal (org.bluez.Error.Failed, "0x80") never reaches the central. What holds
        // is that a write that is no command changes nothing; the face without bluetoothd answers it with 0x80 (the
        // gatttool check). A later bluetoothd that passes the refusal on answers 0x80, which passes too.
        let code = badWrite?["bad_write_error"] as? String
        let unchanged = await waitUntil(.seconds(2), every: .milliseconds(100)) { local() == 5 }
        outcomes.append(
            Outcome(
                check: "BlueZ: a write that is no command changes nothing (answered by bluetoothd, or 0x80)",
                passed: badWrite != nil && (code == nil || code == "0x80") && unchanged,
                detail: badWrite == nil
                    ? "no answer to the write: \(diagnosis())"
                    : "answered \(code ?? "with success by bluetoothd"); count still 5 \(unchanged)"))

        // Notifications: the daemon's user increments twice and moves bubble 0; the central, subscribed, sees the
        // count at 7 (counterState of the daemon's own entry) and the move.
        let control = try daemon.client()
        for _ in 0..<2 {
            _ = try control.call(ControlCommand.increment(count: 1), as: IncrementResult.self)
        }
        _ = try control.call(ControlCommand.move(view: 0, x: 1, y: 2), as: DoneResult.self)
        func events() -> [[String: Any]] { central.events.compactMap { $0["event"] as? [String: Any] } }
        func sawCount() -> Bool {
            events().contains {
                $0["kind"] as? String == "counterState"
                    && ($0["entries"] as? [String: Any])?[id].flatMap { $0 as? NSNumber }?.intValue == 7
            }
        }
        func sawMove() -> Bool {
            events().contains {
                $0["kind"] as? String == "move" && ($0["view"] as? NSNumber)?.intValue == 0
                    && ($0["x"] as? NSNumber)?.doubleValue == 1 && ($0["y"] as? NSNumber)?.doubleValue == 2
            }
        }
        let notified = await waitUntil(.seconds(10), every: .milliseconds(100)) { sawCount() && sawMove() }
        let stillServing = daemon.call(ControlCommand.status, as: StatusResult.self) != nil
        let notifications = central.events.filter { $0["notification"] != nil }
        outcomes.append(
            Outcome(
                check: "BlueZ: notifications of the counts and moves the daemon's user makes",
                passed: notified && stillServing,
                detail: "\(notifications.count) notifications, count 7 \(sawCount()), move to (1, 2) \(sawMove()); "
                    + "still serving \(stillServing)"
                    + (notified
                        ? ""
                        : "; last: \(notifications.suffix(3).compactMap { $0["notification"] as? String }); "
                            + diagnosis())))

        // Round trips: the central goes on when told, times them, and ends.
        central.send("go on")
        let timed = await central.waitFor(timeout: 120, failed("gatt_round_trip"))
        let trips = timed?["gatt_round_trip"] as? [String: Any]
        let count = (trips?["count"] as? NSNumber)?.intValue ?? 0
        _ = await central.waitFor(timeout: 15, failed("done"))
        outcomes.append(
            Outcome(
                check: "BlueZ: GATT round trips, an increment written then its counterState notified",
                passed: count == roundTrips,
                detail: trips.map {
                    "\($0["count"] ?? 0) of \(roundTrips) (lost \($0["lost"] ?? "?")): p50 \($0["p50_us"] ?? "?") µs, "
                        + "p99 \($0["p99_us"] ?? "?") µs (emulated controllers: no radio time)"
                } ?? "not measured: \(diagnosis())"))
        return outcomes
    }
}

extension Check {
    /// RFCOMM under bluetoothd: the daemon's service record in hci1's SDP database (spec 4.4), as BlueZ's `sdptool`
    /// browses it; a plain RFCOMM socket opens the channel the record names; a daemon given hci1's address without a
    /// channel looks the channel up in the record and links to it (the record's channel is not the default one).
    func bluezRFCOMM(_ hci0: RFCOMMTransport.Adapter, _ hci1: RFCOMMTransport.Adapter) async throws -> [Outcome] {
        let tools = (ProcessInfo.processInfo.environment["BTLAB_TOOLS"] ?? "") + "/root/usr/bin"
        // bluetoothd turned page scanning off: hci1 must take BR/EDR connections (SDP, RFCOMM).
        for setting in ["connectable", "bondable"] { _ = shell(["\(tools)/btmgmt", "-i", "hci1", setting, "on"]) }
        let channel = 7
        let b = try Daemon(
            "r2", ["--transport", "rfcomm", "--bt-adapter", "hci1", "--bt-channel", "\(channel)"])
        defer {
            b.stop()
            forgetEachOther(hci0, hci1)
        }
        guard await waitUntil(.seconds(30), every: .milliseconds(100), { b.peerID != nil }) else {
            return [Outcome(check: "BlueZ RFCOMM: the daemon", passed: false, detail: "sessiond did not start")]
        }
        // sdptool, as a person would look: the record, its name and its channel.
        var browsed = ""
        let listed = await waitUntil(.seconds(15), every: .milliseconds(500)) {
            let browse = try? HostProcess.local([
                "/bin/sh", "-c", "timeout 10 \(tools)/sdptool browse \(hci1.address) >&2 2>&1",
            ])
            while browse?.isRunning == true { usleep(20_000) }
            browsed = browse?.stderr ?? ""
            return browsed.contains("Service Name: LanSession") && browsed.contains("Channel: \(channel)")
        }
        let record = browsed.components(separatedBy: "Service Name: LanSession").dropFirst().first?.prefix(400)
        var outcomes = [
            Outcome(
                check: "BlueZ RFCOMM: sdptool browse shows the daemon's record with its channel",
                passed: listed,
                detail: listed
                    ? "LanSession, channel \(channel): \(record.map { String($0) } ?? "")"
                        .replacingOccurrences(of: "\n", with: " | ")
                    : "not listed: \(browsed.suffix(500))")
        ]
        // A plain RFCOMM client (Python's socket module) opens the channel the record names.
        let client = try HostProcess.local([
            "/usr/bin/python3", "-c",
            """
            import socket, sys, time
            for attempt in range(1, 4):
                s = socket.socket(socket.AF_BLUETOOTH, socket.SOCK_STREAM, socket.BTPROTO_RFCOMM)
                s.settimeout(10)
                s.bind(("\(hci0.address)", 0))
                try:
                    s.connect(("\(hci1.address)", \(channel)))
                except OSError as error:
                    print(f"attempt {attempt}: {error}", file=sys.stderr)
                    s.close()
                    time.sleep(1)
                    continue
                print('{"opened": true, "attempt": %d}' % attempt)
                sys.stdout.flush()
                s.close()
                break
            """,
        ])
        // Tried up to three times, as a client does: the ACL link sdptool left may still be closing.
        let openedEvent = await client.waitFor(timeout: 40) { $0["opened"] != nil }
        let opened = openedEvent != nil
        outcomes.append(
            Outcome(
                check: "BlueZ RFCOMM: a plain RFCOMM socket opens the channel the record names",
                passed: opened,
                detail: opened
                    ? "channel \(channel) opened from hci0 at attempt \(openedEvent?["attempt"] ?? "?")"
                    : String(client.stderr.suffix(300))))
        // A daemon given hci1's address alone (its default channel is 5) finds channel 7 in the record.
        // hci1 connectable again, in case bluetoothd turned page scanning off once the links before closed.
        _ = shell(["\(tools)/btmgmt", "-i", "hci1", "connectable", "on"])
        let a = try Daemon("r1", ["--transport", "rfcomm", "--bt-adapter", "hci0", "--bt-peer", hci1.address])
        defer { a.stop() }
        let linked = await waitUntil(.seconds(60), every: .milliseconds(200)) { a.connected == 1 && b.connected == 1 }
        a.stop()  // its log is read once it has exited
        let named = a.process.stderr.contains("names RFCOMM channel \(channel) in its SDP record")
        let dials = a.process.stderr.split(separator: "\n").filter {
            $0.contains("dial") || $0.contains("RFCOMM") || $0.contains("error") || $0.contains("warning")
        }
        outcomes.append(
            Outcome(
                check: "BlueZ RFCOMM: a daemon given the address alone dials the channel of the record",
                passed: linked && named,
                detail: "linked \(linked); looked up \(named)"
                    + (named && linked ? "" : ": \(dials.suffix(8).joined(separator: " | "))")))
        return outcomes
    }
}
