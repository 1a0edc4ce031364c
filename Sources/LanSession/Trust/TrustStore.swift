import Foundation
import WireCodec

/// Keeps the trusted set in a file (JSON, mode 0600), replaced atomically on every change: a full disk or a crash
/// leaves the previous set, never half of one.
struct TrustStore {
    let path: String

    private struct Stored: Codable {
        var format = 1
        var devices: [StoredDevice]
        var removals: [StoredRemoval]
        var issued: [StoredStatement]
        var aboutMe: [StoredStatement]
    }

    private struct StoredDevice: Codable {
        var peerID: String
        var publicKey: String
        var signingKey: String
        var name: String
        var trust: DeviceTrust
        var since: Double
        var introducedBy: String?
        var version: UInt64
    }

    private struct StoredRemoval: Codable {
        var peerID: String
        var publicKey: String
        var version: UInt64
        var removedBy: String
        var at: Double
    }

    private struct StoredStatement: Codable {
        var verb: UInt8
        var subjectKey: String
        var subjectSigningKey: String
        var subjectName: String
        var version: UInt64
        var time: UInt64
        var issuer: String
        var signature: String
    }

    /// The set kept in the file; an empty one when there is no file yet. A file that cannot be read or parsed is an
    /// error naming it (it is not replaced).
    func load(identity: DeviceIdentity, sessionName: String) throws(SessionError) -> TrustedDevices {
        guard FileManager.default.fileExists(atPath: path) else {
            return TrustedDevices(identity: identity, sessionName: sessionName)
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ResourceFile.error("cannot read \(path)")
        }
        do {
            let stored = try JSONDecoder().decode(Stored.self, from: data)
            func bytes(_ hex: String) throws -> [UInt8] {
                guard let value = [UInt8](hex: hex) else { throw SessionError(.trust, "bad hex") }
                return value
            }
            func peer(_ hex: String) throws -> PeerID {
                guard let value = PeerID(hex: hex) else { throw SessionError(.trust, "bad peer id \(hex)") }
                return value
            }
            func statement(_ s: StoredStatement) throws -> TrustStatement {
                TrustStatement(
                    verb: .init(rawValue: s.verb), subjectKey: try bytes(s.subjectKey),
                    subjectSigningKey: try bytes(s.subjectSigningKey), subjectName: s.subjectName, version: s.version,
                    time: s.time, issuer: try peer(s.issuer), signature: try bytes(s.signature))
            }
            return TrustedDevices(
                identity: identity, sessionName: sessionName,
                devices: try stored.devices.map {
                    TrustedDevice(
                        peerID: try peer($0.peerID), publicKey: try bytes($0.publicKey),
                        signingKey: try bytes($0.signingKey), name: $0.name, trust: $0.trust,
                        since: Date(timeIntervalSince1970: $0.since), introducedBy: try $0.introducedBy.map(peer),
                        version: $0.version)
                },
                removals: try stored.removals.map {
                    RemovedDevice(
                        peerID: try peer($0.peerID), publicKey: try bytes($0.publicKey), version: $0.version,
                        removedBy: try peer($0.removedBy), at: Date(timeIntervalSince1970: $0.at))
                },
                issued: try stored.issued.map(statement), aboutMe: try stored.aboutMe.map(statement))
        } catch {
            throw SessionError(
                .invalidConfiguration,
                "\(path) does not hold a trusted set; it is left as it is: restore it from a backup, or move it away to trust no device"
            )
        }
    }

    /// Replaces the file with `trusted`.
    func save(_ trusted: TrustedDevices) throws(SessionError) {
        func statement(_ s: TrustStatement) -> StoredStatement {
            StoredStatement(
                verb: s.verb.rawValue, subjectKey: s.subjectKey.hexString,
                subjectSigningKey: s.subjectSigningKey.hexString, subjectName: s.subjectName, version: s.version,
                time: s.time, issuer: "\(s.issuer)", signature: s.signature.hexString)
        }
        let stored = Stored(
            devices: trusted.devices.values.sorted { $0.peerID < $1.peerID }.map {
                StoredDevice(
                    peerID: "\($0.peerID)", publicKey: $0.publicKey.hexString, signingKey: $0.signingKey.hexString,
                    name: $0.name, trust: $0.trust, since: $0.since.timeIntervalSince1970,
                    introducedBy: $0.introducedBy.map { "\($0)" }, version: $0.version)
            },
            removals: trusted.removals.values.sorted { $0.peerID < $1.peerID }.map {
                StoredRemoval(
                    peerID: "\($0.peerID)", publicKey: $0.publicKey.hexString, version: $0.version,
                    removedBy: "\($0.removedBy)", at: $0.at.timeIntervalSince1970)
            },
            issued: trusted.shared.map(statement),
            aboutMe: trusted.aboutMe.values.sorted { $0.issuer < $1.issuer }.map(statement))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data: Data
        do {
            data = try encoder.encode(stored)
        } catch {
            throw SessionError(.trust, "cannot encode the trusted set: \(error)")
        }
        try AtomicFile.write(Array(data), to: path)
    }
}

extension [UInt8] {
    /// Bytes from lowercase or uppercase hex; nil for anything else.
    init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        self = bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
