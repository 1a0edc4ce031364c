import NIOCore
import Testing

@testable import LanSession

/// The datagram route decided by a fake clock: explicit deadlines, no sleeps.
@Suite("DatagramProber")
struct DatagramProberTests {
    let start = NIODeadline.uptimeNanoseconds(1_000_000_000)

    func prober(_ route: UnreliableRoute = .probing) -> DatagramProber {
        DatagramProber(
            route: route, probeTimeout: .seconds(1), heartbeatInterval: .milliseconds(250),
            livenessTimeout: .seconds(2))
    }

    func at(_ milliseconds: Int64) -> NIODeadline { start + .milliseconds(milliseconds) }

    /// Ticks every 50 ms from `from` up to `to` (both included), as the session does; the actions of every tick.
    func ticks(_ prober: inout DatagramProber, from: Int64, to: Int64) -> [(Int64, DatagramProber.Action)] {
        stride(from: from, through: to, by: 50).flatMap { time in prober.tick(at: at(time)).map { (time, $0) } }
    }

    @Test("a pong makes the route udp; probes go every 200 ms until then")
    func pong() {
        var prober = prober()
        let sent = ticks(&prober, from: 0, to: 450)
        #expect(sent.map(\.0) == [0, 200, 400])
        #expect(sent.allSatisfy { $0.1 == .sendProbe })
        #expect(prober.pongReceived(at: at(460)) == [.routeChanged(.udp)])
        #expect(prober.route == .udp)
        #expect(prober.pongReceived(at: at(470)) == [])
    }

    @Test("a busy peer that answers nothing, on no channel, keeps the route probing")
    func busyPeer() {
        var prober = prober()
        let actions = ticks(&prober, from: 0, to: 5_000)
        #expect(prober.route == .probing)
        // One witness, once the probes are a second overdue; it is not answered, so nothing is decided.
        #expect(actions.filter { $0.1 == .sendWitness }.map(\.0) == [1_000])
        #expect(!actions.contains { $0.1 == .routeChanged(.fallback) })
    }

    @Test("a late answer on every channel is not a lost datagram")
    func lateAnswers() {
        var prober = prober()
        _ = ticks(&prober, from: 0, to: 1_500)
        // The peer's loop wakes up after 1.6 s: it answers the heartbeat sent at 300 ms, then a probe.
        prober.reliablePingAnswered(sentAt: at(300), at: at(1_600))
        #expect(prober.tick(at: at(1_600)).allSatisfy { $0 != .routeChanged(.fallback) })
        #expect(prober.pongReceived(at: at(1_610)) == [.routeChanged(.udp)])
    }

    @Test("a peer that answers its reliable link and no probe falls back, at the witness's answer")
    func witnessed() {
        var prober = prober()
        let actions = ticks(&prober, from: 0, to: 1_000)
        #expect(actions.last?.1 == .sendWitness)
        #expect(prober.witnessSent == at(1_000))
        #expect(!ticks(&prober, from: 1_050, to: 1_100).contains { $0.1 == .routeChanged(.fallback) })
        prober.reliablePingAnswered(sentAt: at(1_000), at: at(1_110))
        // Pongs to the probes may still come for a while after the witness's answer.
        #expect(prober.tick(at: at(1_150)) == [])
        #expect(prober.tick(at: at(1_210)) == [.routeChanged(.fallback)])
        #expect(prober.route == .fallback)
        // It probes on, once per liveness timeout, and comes back on a pong.
        let probes = ticks(&prober, from: 1_250, to: 6_000).map(\.0)
        #expect(probes == [3_000, 5_000])
        #expect(prober.pongReceived(at: at(6_010)) == [.routeChanged(.udp)])
    }

    @Test("a pong to a probe within the grace after the witness's answer keeps the route")
    func pongAfterWitness() {
        var prober = prober()
        _ = ticks(&prober, from: 0, to: 1_000)
        prober.reliablePingAnswered(sentAt: at(1_000), at: at(1_020))
        #expect(prober.tick(at: at(1_050)) == [])
        #expect(prober.pongReceived(at: at(1_060)) == [.routeChanged(.udp)])
        #expect(!ticks(&prober, from: 1_100, to: 3_000).contains { $0.1 == .routeChanged(.fallback) })
    }

    @Test(
        "on udp, probes unanswered for three heartbeats fall back with a witness, though the peer's datagrams still come"
    )
    func udpOneWayLoss() {
        var prober = prober()
        _ = prober.tick(at: at(0))
        _ = prober.pongReceived(at: at(1))
        // The peer's datagrams keep coming (its direction works), but nothing answers this side's probes.
        var actions: [(Int64, DatagramProber.Action)] = []
        for time in stride(from: Int64(50), through: 1_500, by: 50) {
            prober.datagramReceived(at: at(time))
            actions += prober.tick(at: at(time)).map { (time, $0) }
            if let witness = actions.first(where: { $0.1 == .sendWitness }), time == witness.0 {
                prober.reliablePingAnswered(sentAt: at(time), at: at(time + 5))
            }
        }
        #expect(prober.unansweredSince == at(250))  // the first probe after the pong
        #expect(actions.first { $0.1 == .sendWitness }?.0 == 1_000)
        let fellBack = actions.first { $0.1 == .routeChanged(.fallback) }?.0
        #expect(fellBack == 1_150, "fell back at \(fellBack.map(String.init) ?? "never")")
        #expect(prober.route == .fallback)
    }

    @Test("on udp, answered probes keep the route, silence or not")
    func udpAnswered() {
        var prober = prober()
        _ = prober.tick(at: at(0))
        _ = prober.pongReceived(at: at(1))
        for time in stride(from: Int64(50), through: 5_000, by: 50) {
            for action in prober.tick(at: at(time)) where action == .sendProbe {
                _ = prober.pongReceived(at: at(time + 1))
            }
        }
        #expect(prober.route == .udp)
    }

    @Test("a heartbeat answered before the probes were overdue is no witness")
    func earlyHeartbeat() {
        var prober = prober()
        _ = ticks(&prober, from: 0, to: 900)
        prober.reliablePingAnswered(sentAt: at(100), at: at(900))
        #expect(!ticks(&prober, from: 950, to: 1_200).contains { $0.1 == .routeChanged(.fallback) })
        prober.reliablePingAnswered(sentAt: at(50), at: at(1_200))  // an older answer does not move it back
        #expect(prober.answeredPingSent == at(100))
    }

    @Test("a route without datagrams waits in fallback and decides nothing on its own")
    func noDatagrams() {
        var prober = prober(.fallback)
        prober.reliablePingAnswered(sentAt: at(5_000), at: at(5_001))
        #expect(ticks(&prober, from: 0, to: 4_000).allSatisfy { $0.1 == .sendProbe })
        #expect(prober.route == .fallback)
    }
}
