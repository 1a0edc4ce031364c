import Foundation
import TestSupport

/// The independent LanSession peer (Tests/Interop/lansession_peer.py, on Python's `noiseprotocol`): its command line
/// and what it printed, one JSON object per line.
enum PythonPeer {
    static let program = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop/lansession_peer.py").path

    /// Whether Python's `noiseprotocol` is installed (scripts/test installs it); nil when it is, else why not.
    static let unavailableReason: String? = {
        guard let result = try? TestLab.run(["python3", "-c", "import noise"], timeout: 20), result.status == 0 else {
            return "Python's noiseprotocol is not installed (scripts/test installs it from PyPI)"
        }
        return nil
    }()

    /// The JSON lines of `output`.
    static func events(_ output: String) -> [[String: Any]] {
        output.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// The first event named `name`.
    static func first(_ name: String, in events: [[String: Any]]) -> [String: Any]? {
        events.first { $0["event"] as? String == name }
    }
}
