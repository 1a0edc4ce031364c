import TestSupport

/// What happens when: flaps of each host's link, kill -9 and restart of daemons, one avahi-daemon restart.
struct FaultSchedule {
    enum Fault {
        case flap(host: Int, down: Duration)
        case kill(host: Int, restartAfter: Duration)
        case restartAvahi(host: Int)
    }

    var faults: [(at: Duration, fault: Fault)] = []

    /// `spare`: a host whose daemon is never killed.
    static func make(hosts: Int, seconds: Int, spare: Int? = nil, random: inout SplitMix64) -> FaultSchedule {
        var schedule = FaultSchedule()
        let last = Double(seconds)  // faults go on until the counting stops
        // Flaps: each host's link goes down for 0.3...3 s, one flap at a time per host.
        var busyUntil = [Double](repeating: 1, count: hosts + 1)
        var time = 1.0
        while time < last {
            let host = Int.random(in: 1...hosts, using: &random)
            let down = Double.random(in: 0.3...3, using: &random)
            if busyUntil[host] <= time && time + down < last {
                schedule.faults.append((.milliseconds(Int(time * 1000)), .flap(host: host, down: .seconds(down))))
                busyUntil[host] = time + down + 0.3
            }
            time += Double.random(in: 0.3...1.2, using: &random)
        }
        // kill -9: about one every 15 s, restarted 0.5...2 s later.
        let kills = max(1, seconds / 15)
        for index in 0..<kills {
            let at = Double(seconds) * (Double(index) + 0.5) / Double(kills)
            guard at + 2 < last else { continue }
            let candidates = (1...hosts).filter { $0 != spare }
            schedule.faults.append(
                (
                    .milliseconds(Int(at * 1000)),
                    .kill(
                        host: candidates.randomElement(using: &random)!,
                        restartAfter: .seconds(Double.random(in: 0.5...2, using: &random)))
                ))
        }
        // One avahi-daemon restart, at a third of the run, on a host whose link then stays up (avahi 0.8 can stay
        // stuck in its own registration when its interface goes away while it starts: avahi/avahi#233).
        let restartAt = Double(seconds) / 3
        let avahiHost = Int.random(in: 1...hosts, using: &random)
        schedule.faults.removeAll {
            if case .flap(avahiHost, let down) = $0.fault {
                let start = Double($0.at / .milliseconds(1)) / 1000
                return start < restartAt + 3 && start + Double(down / .milliseconds(1)) / 1000 > restartAt - 0.5
            }
            return false
        }
        schedule.faults.append((.milliseconds(Int(restartAt * 1000)), .restartAvahi(host: avahiHost)))
        schedule.faults.sort { $0.at < $1.at }
        return schedule
    }
}
