import ArgumentParser
import AvahiDiscovery
import Foundation
import Logging

/// A small command-line window on AvahiDiscovery, run inside test hosts by the discovery tests.
///
/// Every line it prints on stdout is one JSON object with an "event" and "ms" (milliseconds since start).
@main
struct DNSSDProbe: AsyncParsableCommand {
    static func main() async {
        _ = started  // the clock of every "ms" field starts now
        await main(nil)
    }

    static let configuration = CommandConfiguration(
        commandName: "dnssd-probe",
        abstract: "Publish or browse DNS-SD services through avahi-daemon, printing JSON lines.",
        subcommands: [Publish.self, Browse.self, Check.self]
    )
}

/// Prints one JSON line and flushes it.
func emit(_ event: String, _ fields: [String: Any] = [:]) {
    var object = fields
    object["event"] = event
    object["ms"] = Int((ContinuousClock.now - started) / .milliseconds(1))
    let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

let started = ContinuousClock.now

/// Lines of standard input, read on a thread of their own; the stream ends at end of input.
func standardInputLines() -> AsyncStream<String> {
    let (stream, continuation) = AsyncStream<String>.makeStream()
    Thread.detachNewThread {
        while let line = readLine() { continuation.yield(line) }
        continuation.finish()
    }
    return stream
}

func parseTXT(_ pairs: [String]) throws -> [String: String] {
    var txt: [String: String] = [:]
    for pair in pairs {
        guard let equals = pair.firstIndex(of: "=") else { throw ValidationError("TXT entry \(pair) is not key=value") }
        txt[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
    }
    return txt
}

func makeLogger() -> Logger {
    var logger = Logger(label: "dnssd-probe") { StreamLogHandler.standardError(label: $0) }
    logger.logLevel = .info
    return logger
}

extension DNSSDProbe {
    struct Publish: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish a service; stdin lines `txt k=v ...` update its TXT record, `withdraw` ends it.")

        @Option(help: "Instance name.") var name: String
        @Option(help: "Service type.") var type = ServiceDescription.defaultType
        @Option(help: "Port.") var port: UInt16
        @Option(help: "TXT entry key=value (repeatable).") var txt: [String] = []
        @Flag(help: "The name is known to be unique: announce without probing.") var unique = false

        func run() async throws {
            let connection = try await AvahiConnection.connect(logger: makeLogger())
            let asked = ContinuousClock.now
            let publication = try await connection.publish(
                ServiceDescription(name: name, type: type, port: port, txt: try parseTXT(txt), isNameUnique: unique))
            emit(
                "established",
                ["name": publication.name, "registrationMs": Int((ContinuousClock.now - asked) / .milliseconds(1))])
            Task {
                // After a daemon restart the publication registers again; report each time it is established.
                var wasEstablished = true
                while true {
                    try await Task.sleep(for: .milliseconds(20))
                    let now = publication.isEstablished
                    if now && !wasEstablished { emit("established", ["name": publication.name]) }
                    wasEstablished = now
                }
            }
            for await line in standardInputLines() {
                let words = line.split(separator: " ").map(String.init)
                switch words.first {
                case "txt":
                    try await publication.updateTXT(try parseTXT(Array(words.dropFirst())))
                    emit("txtUpdated")
                case "withdraw":
                    await publication.withdraw()
                    emit("withdrawn")
                    await connection.close()
                    return
                default:
                    emit("unknownCommand", ["line": line])
                }
            }
            await publication.withdraw()
            await connection.close()
        }
    }

    struct Browse: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Browse for a service type until the timeout.")

        @Option(help: "Service type.") var type = ServiceDescription.defaultType
        @Option(help: "Seconds to browse.") var timeout: Double = 10
        @Flag(help: "Resolve each instance once, without following its changes.") var once = false
        @Option(help: "Report instances as sighted and resolve only those whose name starts with this.")
        var resolvePrefix: String?

        func run() async throws {
            let connection = try await AvahiConnection.connect(logger: makeLogger())
            let events = connection.browse(
                type: type, followingChanges: !once, resolvingOnRequest: resolvePrefix != nil)
            let deadline = Task {
                try? await Task.sleep(for: .seconds(timeout))
                await connection.close()
            }
            for await event in events {
                switch event {
                case .found(let service):
                    emit(
                        "found",
                        [
                            "name": service.name, "type": service.type, "domain": service.domain,
                            "host": service.hostName, "port": Int(service.port), "txt": service.txt,
                            "addresses": service.addresses.map(\.description),
                            "interfaces": service.addresses.map(\.interfaceName), "own": service.isOwn,
                        ])
                case .sighted(let name, let type, _, let interfaces):
                    emit("sighted", ["name": name, "type": type, "interfaces": interfaces])
                    if let resolvePrefix, name.hasPrefix(resolvePrefix) { connection.resolve(name, type: type) }
                case .removed(let name, let type, _):
                    emit("removed", ["name": name, "type": type])
                case .allForNow:
                    emit("allForNow")
                case .failure(let error):
                    emit("failure", ["message": error.message])
                }
            }
            deadline.cancel()
        }
    }

    struct Check: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Connect to avahi-daemon and report its host name.")

        func run() async throws {
            do {
                let connection = try await AvahiConnection.connect(logger: makeLogger())
                emit("running", ["host": connection.hostName ?? ""])
                await connection.close()
            } catch {
                emit("error", ["code": "\(error.code)", "message": error.message])
                throw ExitCode(1)
            }
        }
    }
}
