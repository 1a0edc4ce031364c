import Foundation
import Synchronization
import TestSupport

/// Carries out a fault schedule.
final class Faults: Sendable {
    let lab: TestLab
    let daemons: Daemons
    private let state = Mutex<(flaps: Int, kills: Int, avahi: Int, lastEnded: ContinuousClock.Instant?)>((0, 0, 0, nil))

    init(lab: TestLab, daemons: Daemons) {
        self.lab = lab
        self.daemons = daemons
    }

    var flaps: Int { state.withLock { $0.flaps } }
    var kills: Int { state.withLock { $0.kills } }
    var avahiRestarts: Int { state.withLock { $0.avahi } }
    var lastFaultEnded: ContinuousClock.Instant? { state.withLock { $0.lastEnded } }

    private func ended() {
        state.withLock { $0.lastEnded = ContinuousClock.now }
    }

    func run(_ schedule: FaultSchedule, from start: ContinuousClock.Instant) async {
        await withTaskGroup(of: Void.self) { group in
            for (at, fault) in schedule.faults {
                try? await Task.sleep(until: start + at)
                group.addTask { await self.carryOut(fault) }
            }
        }
    }

    private func carryOut(_ fault: FaultSchedule.Fault) async {
        switch fault {
        case .flap(let host, let down):
            state.withLock { $0.flaps += 1 }
            do {
                try lab.setLink(host, up: false)
                try? await Task.sleep(for: down)
                try lab.setLink(host, up: true)
            } catch {
                log("flap of host \(host): \(error)")
            }
            log("host \(host): link down \(down)")
            ended()
        case .kill(let host, let restartAfter):
            state.withLock { $0.kills += 1 }
            daemons.kill9(host)
            log("host \(host): kill -9")
            try? await Task.sleep(for: restartAfter)
            do {
                try daemons.start(host)
            } catch {
                log("restarting host \(host): \(error)")
            }
            log("host \(host): restarted after \(restartAfter)")
            ended()
        case .restartAvahi(let host):
            state.withLock { $0.avahi += 1 }
            do {
                try lab.avahi(host, "restart")
            } catch {
                log("avahi restart on host \(host): \(error)")
            }
            log("host \(host): avahi-daemon restarted")
            ended()
        }
    }
}
