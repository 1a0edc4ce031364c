import ArgumentParser
import TestHosts
import Testing

@testable import lansession_testnet

/// scripts/testnet's command line: what each command takes, and what is a bad argument (exit 2).
@Suite("lansession-testnet arguments")
struct TestNetArgumentsTests {
    @Test("up: count, prefix, ttl and networks, in any order")
    func up() throws {
        let up = try #require(try TestNet.parseAsRoot(["up", "--ttl", "120", "3", "--networks", "2"]) as? Up)
        #expect(up.count.value == 3)
        #expect(up.ttl.value == 120)
        #expect(up.networks == .two)
        #expect(up.prefix == LabSetup.defaultPrefix)
        let setup = up.setup
        #expect(setup.hostCount == 3 && setup.ttl == 120 && setup.networks == 2)
        #expect(setup.prefix == LabSetup.defaultPrefix)
        let defaults = try #require(try TestNet.parseAsRoot(["up", "64", "--prefix", "bench-mesh"]) as? Up)
        #expect(defaults.ttl.value == 600 && defaults.networks == .one && defaults.prefix == "bench-mesh")
    }

    @Test(
        "bad arguments are refused",
        arguments: [
            ["up"], ["up", "0"], ["up", "65"], ["up", "03"], ["up", "+3"], ["up", "3", "4"], ["up", "3", "--ttl", "0"],
            ["up", "3", "--ttl", "1000000"], ["up", "3", "--networks", "3"], ["up", "3", "--prefix", "Lab"],
            ["up", "3", "--prefix", "1lab"], ["up", "3", "--bogus"], ["exec", "lab", "1"],
            ["exec", "Lab", "1", "true"],
            ["pid", "lab"], ["pid", "lab", "1", "2"], ["addr", "lab", "1", "3"], ["avahi", "lab", "1", "reload"],
            ["avahi", "lab", "1"], ["down"], ["down", "Lab"], ["down", "a", "b"], ["list", "x"], ["bogus"],
        ])
    func badArguments(arguments: [String]) {
        #expect(throws: (any Error).self, "\(arguments)") { try TestNet.parseAsRoot(arguments) }
    }

    @Test("exec passes the command on as it is, options included")
    func exec() throws {
        let exec = try #require(try TestNet.parseAsRoot(["exec", "lab", "2", "ip", "-4", "addr", "--help"]) as? Exec)
        #expect(exec.target.name == "lab")
        #expect(exec.target.host == "2")
        #expect(exec.command == ["ip", "-4", "addr", "--help"])
    }

    @Test("pid, addr, avahi, down and list")
    func smallCommands() throws {
        let pid = try #require(try TestNet.parseAsRoot(["pid", "lab", "1"]) as? PID)
        #expect(pid.target.name == "lab" && pid.target.host == "1")
        let addr = try #require(try TestNet.parseAsRoot(["addr", "lab", "1"]) as? Addr)
        #expect(addr.network == .one)
        let addr2 = try #require(try TestNet.parseAsRoot(["addr", "lab", "1", "2"]) as? Addr)
        #expect(addr2.network == .two)
        for action in HostAvahi.Action.allCases {
            let avahi = try #require(try TestNet.parseAsRoot(["avahi", "lab", "3", action.rawValue]) as? Avahi)
            #expect(avahi.action == action)
        }
        let down = try #require(try TestNet.parseAsRoot(["down", "lst-abcdef"]) as? Down)
        #expect(down.name == "lst-abcdef")
        #expect(try TestNet.parseAsRoot(["list"]) is List)
    }

    @Test("exit codes: bad arguments 2, requirements missing 77, failures 1")
    func exitCodes() {
        #expect(TestHostError(.badArgument, "").exitCode == 2)
        #expect(TestHostError(.unavailable, "").exitCode == 77)
        #expect(TestHostError.failed("").exitCode == 1)
    }
}
