#!/usr/bin/env bash
# shellcheck disable=SC2317 # the helpers run through within(), gate() and the traps
# The machine lab's checks (scripts/machines check): the Debian package on three Debian 12 machines booted with
# systemd, each with Debian's own dbus and avahi-daemon.
#
#   scripts/machines check [--package DEB --upgrade DEB]
#
# Without the packages given, scripts/package builds the tree's version (with lintian) and a second one, VERSION+1,
# for the upgrade. One line per check ("ok - ..." or "FAIL - ...: why"), then "machines: N passed, M failed"; a check
# that later ones stand on stops the run when it fails. Exit 0 when every check passed, 1 otherwise.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
machines=$root/scripts/machines

usage() {
    echo "usage: scripts/machines check [--package DEB --upgrade DEB]" >&2
    exit 2
}
package="" upgrade=""
while (($#)); do
    case $1 in
    --package | --upgrade)
        (($# >= 2)) || usage
        [[ -f $2 ]] || {
            echo "machines: no file $2" >&2
            exit 2
        }
        [[ $1 == --package ]] && package=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
        [[ $1 == --upgrade ]] && upgrade=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
        shift 2
        ;;
    *) usage ;;
    esac
done
[[ -z $package && -z $upgrade || -n $package && -n $upgrade ]] || usage

started=$SECONDS
passed=0 failed=0
lab=""
finished=0
work=$(mktemp -d)
cleanup() {
    local rc=$?
    if ((!finished)); then
        echo "machines: stopped by a command that failed (above)"
        echo "machines: $passed passed, $((failed + 1)) failed"
        rc=1
    fi
    [[ -n $lab ]] && "$machines" down "$lab" >/dev/null 2>&1
    rm -rf "$work"
    exit "$rc"
}
trap cleanup EXIT
trap 'echo "FAIL - line $LINENO: $BASH_COMMAND" >&2' ERR

say() { printf '\n== %s\n' "$*" >&2; }
ok() {
    passed=$((passed + 1))
    echo "ok - $*"
}
fail() {
    failed=$((failed + 1))
    echo "FAIL - $*"
}
finish() {
    finished=1
    echo "machines: $((SECONDS - started)) s in all"
    echo "machines: $passed passed, $failed failed"
    ((failed == 0)) && exit 0
    exit 1
}
# A check that the rest stand on: when it fails, say so and stop.
gate() {
    ((failed == 0)) && return 0
    echo "machines: stopping: the checks after this one stand on it"
    finish
}

# Runs CMD in machine I.
on() {
    local i=$1
    shift
    "$machines" exec "$lab" "$i" "$@"
}
client() {
    local i=$1
    shift
    on "$i" session-client "$@"
}
# Reads a JSON document on standard input and prints the Python expression $1 of it (the document is `d`).
json() { python3 -c 'import json, sys; d = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
# Retries `$@` every 0.2 s for up to $1 seconds, until it succeeds.
within() {
    local seconds=$1 deadline
    shift
    deadline=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || return 1
        sleep 0.2
    done
}
main_pid() { on "$1" systemctl show -p MainPID --value lansession; }
connected_peers() { client "$1" --json status | json 'd["peers"]'; }
peers_are() { [[ $(connected_peers "$1") == "$2" ]]; }
total_is() { [[ $(client "$1" --json counter | json 'd["total"]') == "$2" ]]; }
every_total_is() {
    local i
    for i in 1 2 3; do total_is "$i" "$1" || return 1; done
}
# The daemon's own journal lines (not systemd's about the unit) at exactly one priority (notice, warning, ...).
journal_at() { on "$1" journalctl -u lansession SYSLOG_IDENTIFIER=sessiond -p "$2..$2" -o cat --no-pager; }

# --- the packages --------------------------------------------------------------------------------------------------

if [[ -z $package ]]; then
    say "packages: the tree's version, and a second build for the upgrade"
    package=$("$root/scripts/package" --output "$work/built")
    first=$(dpkg-deb -f "$package" Version)
    upgrade=$("$root/scripts/package" --version "$first+1" --no-lintian --output "$work/built")
fi
first=$(dpkg-deb -f "$package" Version)
second=$(dpkg-deb -f "$upgrade" Version)
dpkg --compare-versions "$second" gt "$first" || {
    echo "machines: the upgrade ($second) is not newer than the package ($first)" >&2
    exit 2
}
mkdir -p "$work/share"
cp "$package" "$work/share/lansession_${first}_amd64.deb"
cp "$upgrade" "$work/share/lansession_${second}_amd64.deb"
echo "package $first ($(du -h "$package" | cut -f1)), upgrade $second"

say "three machines booted with systemd, one LAN"
boot=$SECONDS
lab=$(MACHINES_SHARE=$work/share "$machines" up 3 --ttl 600)
ok "3 machines running (systemd, dbus, avahi-daemon) in $((SECONDS - boot)) s"
for i in 1 2 3; do
    states=$(on "$i" systemctl is-active dbus avahi-daemon | tr '\n' ' ')
    [[ $states == "active active " ]] || fail "machine $i: dbus and avahi-daemon are not both active ($states)"
done
gate

# --- install -------------------------------------------------------------------------------------------------------

say "apt-get install ./lansession_${first}_amd64.deb on each machine"
for i in 1 2 3; do
    if ! on "$i" sh -c "cd /srv/share && apt-get install -y -q ./lansession_${first}_amd64.deb" \
        >"$work/install-$i.log" 2>&1; then
        fail "machine $i: apt-get install: $(tail -3 "$work/install-$i.log" | tr '\n' ' ')"
        continue
    fi
    active=$(on "$i" systemctl is-active lansession || true)
    enabled=$(on "$i" systemctl is-enabled lansession || true)
    user=$(on "$i" ps -o user= -p "$(main_pid "$i")" || true)
    if [[ $active == active && $enabled == enabled && $user == lansession ]]; then
        ok "machine $i: installed; lansession.service $active and $enabled, sessiond runs as $user"
    else
        fail "machine $i: lansession.service is $active, $enabled, runs as '$user'"
        on "$i" journalctl -u lansession -o cat --no-pager | tail -5
    fi
done
declare -A ids
for i in 1 2 3; do
    if within 10 client "$i" status; then
        ids[$i]=$(client "$i" --json status | json 'd["peerID"]')
    else
        fail "machine $i: session-client gets no answer on the unit's socket"
    fi
done
gate
ok "session-client answers on /run/lansession/sessiond.sock on every machine"

# --- discovery, pairing, counting, a bubble ------------------------------------------------------------------------

say "discovery through each machine's avahi-daemon"
sees_both() {
    local listed
    listed=$(client 1 --json peers | json '" ".join(sorted(p["peerID"] for p in d))')
    [[ $listed == *"${ids[2]}"* && $listed == *"${ids[3]}"* ]]
}
discovery=$SECONDS
if within 20 sees_both; then
    ok "machine 1 discovered machines 2 and 3 through avahi-daemon in $((SECONDS - discovery)) s"
else
    fail "machine 1 does not see machines 2 and 3: $(client 1 peers 2>&1 | tr '\n' ' ')"
fi
gate

say "pairing: machines 2 and 3 with machine 1, the code compared on both sides"
pair_with_1() {
    local i=$1 asked code1 code2
    asked=$(client 1 pair "${ids[$i]}" 2>&1) || {
        fail "machine 1: pair ${ids[$i]}: $asked"
        return
    }
    code1=$(sed -n 's/.*code \([0-9]\{6\}\).*/\1/p' <<<"$asked" | head -1)
    shown_code() { code2=$(client "$i" --json pairings | json 'd[0]["code"] if d else ""') && [[ -n $code2 ]]; }
    within 10 shown_code || true
    if [[ -z $code1 || $code1 != "$code2" ]]; then
        fail "machine $i: the codes differ (machine 1 shows '$code1', machine $i '$code2')"
        return
    fi
    client "$i" pair "${ids[1]}" --confirm "$code2" >/dev/null
    client 1 pair "${ids[$i]}" --confirm "$code1" >/dev/null
    ok "machine $i paired with machine 1 (code $code1 on both)"
}
pair_with_1 2
pair_with_1 3
all_connected() { peers_are 1 2 && peers_are 2 2 && peers_are 3 2; }
if within 20 all_connected; then
    ok "every machine is connected to the two others (3 admitted on 1's introduction by 2, and 2 by 3)"
else
    fail "not every machine sees two connected peers: $(for i in 1 2 3; do echo -n "$i: $(connected_peers "$i") "; done)"
fi
gate

say "counting and a bubble"
client 1 increment -n 5 >/dev/null
client 2 increment -n 3 >/dev/null
client 3 increment -n 2 >/dev/null
if within 10 every_total_is 10; then
    ok "5 + 3 + 2 increments: every machine counts 10"
else
    fail "the totals are not 10 everywhere: $(for i in 1 2 3; do echo -n "$(client "$i" counter | tr '\n' ' ') | "; done)"
fi
client 2 bubble pickup 0 >/dev/null
client 2 bubble move 0 123 45 >/dev/null
client 2 bubble drop 0 >/dev/null
bubble_arrived() {
    [[ $(client "$1" --json bubble list | json '[(float(b["x"]), float(b["y"])) for b in d if b["view"] == 0][0]') == \
        "(123.0, 45.0)" ]]
}
if within 10 bubble_arrived 3 && within 10 bubble_arrived 1; then
    ok "machine 2 moved bubble 0 to (123, 45): machines 1 and 3 show it there"
else
    fail "bubble 0 did not arrive: machine 3 shows $(client 3 --json bubble list)"
fi

# --- restart -------------------------------------------------------------------------------------------------------

say "systemctl restart lansession on machine 1"
before_pid=$(main_pid 1)
devices_before=$(client 1 --json devices | json 'len(d)')
on 1 systemctl restart lansession
after_pid=$(main_pid 1)
if within 10 client 1 status && [[ $after_pid != "$before_pid" ]] &&
    [[ $(client 1 --json status | json 'd["peerID"]') == "${ids[1]}" ]] &&
    [[ $(client 1 --json devices | json 'len(d)') == "$devices_before" ]] && within 20 peers_are 1 2 &&
    within 10 total_is 1 10; then
    ok "restarted (pid $before_pid -> $after_pid): the same peer id, $devices_before trusted devices, total 10," \
        "both peers back"
else
    fail "after the restart machine 1 has: $(client 1 status 2>&1 | tr '\n' ' ') $(client 1 counter 2>&1 | tr '\n' ' ')"
fi
client 1 increment >/dev/null
if within 10 every_total_is 11; then ok "an increment after the restart: 11 everywhere"; else fail "not 11 everywhere"; fi

# --- upgrade -------------------------------------------------------------------------------------------------------

say "upgrade to $second on machines 1 and 2 (machine 3 stays at $first)"
for i in 1 2; do
    before_pid=$(main_pid "$i")
    devices_before=$(client "$i" --json devices | json 'sorted(x["peerID"] for x in d)')
    if ! on "$i" sh -c "cd /srv/share && apt-get install -y -q ./lansession_${second}_amd64.deb" \
        >"$work/upgrade-$i.log" 2>&1; then
        fail "machine $i: the upgrade failed: $(tail -3 "$work/upgrade-$i.log" | tr '\n' ' ')"
        continue
    fi
    within 10 client "$i" status || true
    pid=$(main_pid "$i")
    # shellcheck disable=SC2016 # dpkg-query's format
    installed=$(on "$i" dpkg-query -W -f '${Version}' lansession)
    running=$(client "$i" --json status | json 'd["version"]')
    exe=$(on "$i" readlink "/proc/$pid/exe")
    id=$(client "$i" --json status | json 'd["peerID"]')
    devices=$(client "$i" --json devices | json 'sorted(x["peerID"] for x in d)')
    if [[ $installed == "$second" && $running == "$second" && $exe == /usr/bin/sessiond && $pid != "$before_pid" &&
        $id == "${ids[$i]}" && $devices == "$devices_before" ]] && within 10 total_is "$i" 11; then
        ok "machine $i: $installed installed, the daemon (pid $pid, $exe) runs $running; the same peer id," \
            "trusted devices and total 11"
    else
        fail "machine $i after the upgrade: installed $installed, running $running ($exe, pid $before_pid ->" \
            "$pid), peer id $id (was ${ids[$i]}), devices $devices (were $devices_before)"
    fi
done
if within 20 all_connected; then ok "after the upgrade every machine is connected to the two others"; else
    fail "after the upgrade not every machine sees two peers"
fi
client 3 increment -n 4 >/dev/null
if within 10 every_total_is 15; then
    ok "4 increments on machine 3 ($first): 15 on the upgraded machines too"
else
    fail "not 15 everywhere"
fi

# --- the journal ---------------------------------------------------------------------------------------------------

say "the journal: the operator's lines at their levels"
# A hostile neighbour: a request of another protocol (as a browser or a scanner sends) to machine 1's port, from
# machine 3. Its bytes are no frame of the protocol: that connection is closed, with a warning, and nothing else.
port=$(client 1 --json status | json 'd["port"]')
request='GET / HTTP/1.1\r\nHost: m1\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\nConnection: close\r\n\r\n'
on 3 bash -c "exec 3<>/dev/tcp/$("$machines" addr "$lab" 1)/$port; printf '$request' >&3; sleep 0.5" >/dev/null 2>&1 ||
    true
warned() { journal_at 1 warning | grep -q "malformed frame"; }
notices=$(journal_at 1 notice)
infos=$(journal_at 1 info)
if grep -q "paired with" <<<"$notices" && grep -q "connected to" <<<"$infos" && ! grep -q "paired with" <<<"$infos" &&
    within 5 warned && peers_are 1 2; then
    ok "journalctl -p: 'paired with' at notice, 'connected to' at info, the neighbour's request at warning" \
        "('$(journal_at 1 warning | grep "malformed frame" | tail -1 | cut -c1-90)...'); both peers still served"
else
    fail "the journal's levels: notice [$(head -2 <<<"$notices" | tr '\n' ' ')]; warning" \
        "[$(journal_at 1 warning | head -2 | tr '\n' ' ')]"
fi
# A bad option in the conffile: the unit fails at once, says why at the error level, and is not restarted in a loop.
on 1 sh -c 'cp /etc/default/lansession /root/lansession.saved && echo SESSIOND_OPTS=\"--max-peers 0\" >/etc/default/lansession'
on 1 systemctl restart lansession || true
has_failed() { [[ $(on 1 systemctl show -p ActiveState --value lansession) == failed ]]; }
within 5 has_failed || true
result=$(for p in Result ExecMainStatus NRestarts; do on 1 systemctl show -p "$p" --value lansession; done | tr '\n' ' ')
errors=$(journal_at 1 err | tail -1)
if [[ $result == "exit-code 2 0 " && $errors == *--max-peers* ]]; then
    ok "--max-peers 0 in /etc/default/lansession: the unit failed with status 2, not restarted, and the journal says" \
        "at err: '$errors'"
else
    fail "a bad option: result, status, restarts '$result', at err: '$errors'"
fi
on 1 sh -c 'mv /root/lansession.saved /etc/default/lansession && systemctl restart lansession'
if within 10 client 1 status && within 20 peers_are 1 2; then ok "the option put back: machine 1 is back"; else
    fail "machine 1 did not come back after the bad option"
fi

# --- hardening -----------------------------------------------------------------------------------------------------

say "systemd-analyze security lansession.service"
exposure() { on "$1" systemd-analyze security --no-pager lansession.service | sed -n 's/.*Overall exposure level for lansession.service: \([0-9.]*\) \([A-Z]*\).*/\1 \2/p'; }
score=$(exposure 1)
if [[ -n $score ]] && python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 2.0 else 1)' "${score% *}"; then
    ok "exposure $score (goal: 2.0 or less)"
else
    fail "exposure '$score' (goal: 2.0 or less)"
    on 1 systemd-analyze security --no-pager lansession.service | grep '✗' || true
fi

say "the Bluetooth drop-in on machine 2"
on 2 sh -c 'mkdir -p /etc/systemd/system/lansession.service.d &&
    ln -s /usr/share/lansession/bluetooth.conf /etc/systemd/system/lansession.service.d/bluetooth.conf &&
    echo "SESSIOND_OPTS=\"--transport all --http 8080\"" >/etc/default/lansession && systemctl daemon-reload &&
    systemctl restart lansession'
families=$(on 2 systemctl show -p RestrictAddressFamilies --value lansession)
capabilities=$(on 2 systemctl show -p CapabilityBoundingSet --value lansession)
ambient=$(on 2 systemctl show -p AmbientCapabilities --value lansession)
if [[ $families == *AF_BLUETOOTH* && $capabilities == cap_net_admin && $ambient == cap_net_admin ]] &&
    within 10 client 2 status && within 20 peers_are 2 2; then
    ok "with the drop-in: families '$families', capabilities '$capabilities' and nothing more; exposure" \
        "$(exposure 2); --transport all on a machine without Bluetooth still serves the LAN"
else
    fail "with the drop-in: families '$families', capabilities '$capabilities', ambient '$ambient'," \
        "$(on 2 systemctl is-active lansession)"
fi

# The page, as README tells people to open it: the address `session-client web` prints, fetched inside machine 2's
# network (its own 127.0.0.1).
url=$(client 2 web 2>&1 || true)
page=$(ip netns exec "$lab-m2" python3 -c 'import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=5) as r: print(r.status, r.headers.get("Content-Type"), len(r.read()))' \
    "$url" 2>&1 || true)
if [[ $url == http://127.0.0.1:8080/* && $page == "200 text/html"* ]]; then
    ok "--http 8080: session-client web prints ${url%%token=*}token=...; the page answers ($page bytes)"
else
    fail "the page: session-client web says '$url', the page '$page'"
fi

# --- remove and purge ----------------------------------------------------------------------------------------------

say "apt-get remove, install again, purge on machine 3"
on 3 apt-get remove -y -q lansession >"$work/remove.log" 2>&1
state=$(on 3 sh -c 'ls /var/lib/lansession 2>/dev/null | tr "\n" " "')
if [[ $(on 3 systemctl is-active lansession || true) != active ]] && ! on 3 pgrep -x sessiond >/dev/null &&
    [[ $state == *device-key* && $state == *counter* ]] && on 3 test -f /etc/default/lansession; then
    ok "removed: the daemon is stopped; /var/lib/lansession ($state) and /etc/default/lansession are kept"
else
    fail "after apt-get remove: $(on 3 systemctl is-active lansession), state '$state'"
fi
if within 10 peers_are 1 1; then ok "machine 1 sees machine 3 gone"; else fail "machine 1 still sees 2 peers"; fi
on 3 sh -c "cd /srv/share && apt-get install -y -q ./lansession_${second}_amd64.deb" >>"$work/remove.log" 2>&1
if within 10 client 3 status && [[ $(client 3 --json status | json 'd["peerID"]') == "${ids[3]}" ]] &&
    within 20 peers_are 3 2 && within 10 total_is 3 15; then
    ok "installed again: the same device (${ids[3]}), connected to both, total 15"
else
    fail "installed again: $(client 3 status 2>&1 | tr '\n' ' ')"
fi
on 3 apt-get purge -y -q lansession >>"$work/remove.log" 2>&1
if ! on 3 test -e /var/lib/lansession && ! on 3 test -e /etc/default/lansession &&
    ! on 3 test -e /lib/systemd/system/lansession.service && ! on 3 pgrep -x sessiond >/dev/null; then
    ok "purged: /var/lib/lansession, /etc/default/lansession and the unit are gone"
else
    fail "after apt-get purge: $(on 3 ls -d /var/lib/lansession /etc/default/lansession 2>&1 | tr '\n' ' ')"
fi

finish
