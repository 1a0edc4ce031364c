#if canImport(Glibc)
    import Glibc
#endif

/// The holder of a host: a shell in the host's network namespace and a fresh private mount namespace, which keeps
/// both alive (enter them through its pid). It gives the host its own /run, starts the host's system D-Bus, records
/// its own pid (hI.pid), then waits for its time to live or a signal and takes the host's daemons with it (killing
/// only processes of its own network namespace: pid files can be stale).
public enum HolderProcess {
    /// The holder's name in its command line.
    public static let marker = "lansession-testnet-holder"

    /// The holder's shell script; arguments: the state directory, the host's number, the seconds to live.
    public static let script = #"""
        set -eu
        state=$1 i=$2 ttl=$3
        mount -t tmpfs -o mode=0755 testnet-run /run
        [ -L /var/run ] || mount -t tmpfs -o mode=0755 testnet-run /var/run
        mkdir -p /run/dbus /run/avahi-daemon
        # Static service files and D-Bus activation files of the machine stay out of the host.
        [ ! -d /etc/avahi/services ] || mount -t tmpfs -o mode=0755 testnet-empty /etc/avahi/services
        activation=/usr/share/dbus-1/system-services
        [ ! -d $activation ] || mount -t tmpfs -o mode=0755 testnet-empty $activation
        dbus-daemon --system --fork --print-pid >"$state/h$i.dbus.pid"
        own=$(readlink /proc/$$/ns/net)
        sleeper=""
        finish() {
            trap - TERM INT HUP
            [ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null || true
            for f in /run/avahi-daemon/pid /run/dbus/pid; do
                p=$(cat "$f" 2>/dev/null) || continue
                [ "$(readlink "/proc/$p/ns/net" 2>/dev/null)" != "$own" ] || kill "$p" 2>/dev/null || true
            done
            exit 0
        }
        trap finish TERM INT HUP
        echo $$ >"$state/h$i.pid.new"
        mv "$state/h$i.pid.new" "$state/h$i.pid"
        sleep "$ttl" &
        sleeper=$!
        wait "$sleeper" || true
        finish
        """#

    /// Starts host `host`'s holder, living `seconds`, logging to hI.log; records the starting pid in hI.start.
    public static func start(
        _ host: Int, of layout: TestHostLayout, seconds: Int, state: LabStateDirectory
    )
        throws(TestHostError)
    {
        let command = [
            "ip", "netns", "exec", layout.hostNamespace(host), "unshare", "--mount", "--propagation", "private", "sh",
            "-c", script, marker, state.path, "\(host)", "\(seconds)",
        ]
        let pid: pid_t
        do {
            pid = try CommandRunner.spawnDetached(command, log: state.hostFile(host, "log"))
        } catch {
            throw TestHostError.failed("\(layout.hostNamespace(host)): cannot start its holder: \(error)")
        }
        try LabStateDirectory.write(state.hostFile(host, "start"), "\(pid)")
    }

    /// Waits until every host's holder has recorded its pid (once its D-Bus runs), until `deadline` (``Clock``);
    /// fails as soon as a holder gave up (its log says why) or once the deadline has passed.
    public static func waitStarted(
        _ layout: TestHostLayout, state: LabStateDirectory, until deadline: Double
    )
        throws(TestHostError)
    {
        for host in layout.hosts {
            while LabStateDirectory.read(state.hostFile(host, "pid")).map({ $0.isEmpty }) ?? true {
                let starter = LabStateDirectory.readPID(state.hostFile(host, "start")) ?? 0
                guard Clock.now < deadline, ProcessTable.isLive(starter) else {
                    let log = LabStateDirectory.read(state.hostFile(host, "log")) ?? ""
                    throw TestHostError.failed(
                        "\(layout.hostNamespace(host)): holder did not start: "
                            + log.split(separator: "\n").suffix(3).joined(separator: "\n"))
                }
                Clock.sleep(0.05)
            }
        }
    }
}
