/// One event line of `watch` as it is written: `event` names it, the members of every event beside it, each optional.
/// Only the socket's edges see it: ``ControlEvent`` is the event, typed, that it is read into and written from.
package struct ControlEventLine: Codable, Hashable, Sendable {
    /// The event's name (``ControlEvent/name``).
    package var event: String
    /// The event's number in the daemon's run, from 1 (none on `eventsMissed`).
    package var seq: UInt64?
    package var peerID: String?
    package var name: String?
    package var reason: String?
    package var count: UInt64?
    package var total: UInt64?
    package var view: Int?
    package var holder: String?
    package var x: Double?
    package var y: Double?
    /// layout: player index per peer id.
    package var layout: [String: Int]?
    /// invitation: its number.
    package var id: UInt64?
    package var state: String?
    package var address: String?
    /// linkChanged: the link's transport.
    package var transport: String?
    /// data: the message in base64; text: the same as UTF-8 when it is.
    package var data: String?
    package var text: String?
    /// data: "reliable" or "unreliable"; streamOpened: the stream's name.
    package var channel: String?
    /// transfer: the transfer's id, phase, direction, bytes so far and size, where it landed, its SHA-256.
    package var transfer: TransferResult?
    /// pairingRequested, paired, introduced: the device's fingerprint.
    package var fingerprint: String?
    /// pairingRequested: the code both devices show.
    package var code: String?
    /// eventsMissed: the daemon restarted since the number the watcher asked from.
    package var restarted: Bool?
    /// When the daemon saw the event (ISO 8601, UTC, milliseconds).
    package var time: String?

    package init(event: String) { self.event = event }
}
