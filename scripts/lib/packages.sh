# shellcheck shell=bash
# Debian package installation for the project's scripts, with service starts blocked.
#
# Sourced by scripts/test and scripts/testnet. Installing avahi-daemon or dbus must never start a daemon in the
# machine's own network namespace: policy-rc.d refuses every start during the installation, and afterwards any
# avahi-daemon that appeared in this namespace is stopped and reported as a failure.
# Callers provide die() and call restore_policy from their EXIT trap.

# Every build of the package's own code treats warnings as errors; the scripts share these flags so that one build
# folder serves them all (a change of flags rebuilds everything).
# shellcheck disable=SC2034 # used by the scripts that source this file
swift_build_flags=(-Xswiftc -warnings-as-errors)

policy_backup=${policy_backup:-}
policy_created=${policy_created:-0}

# The pids of avahi-daemon processes that run in the machine's own network namespace (the one of this script).
root_netns_avahi_pids() {
    local own pid
    own=$(readlink /proc/$$/ns/net)
    for pid in $(pgrep -x avahi-daemon || true); do
        if [[ $(readlink "/proc/$pid/ns/net" 2>/dev/null) == "$own" ]]; then echo "$pid"; fi
    done
}

# Makes /usr/sbin/policy-rc.d refuse every service start (exit 101) for the duration of an installation.
block_service_starts() {
    local policy=/usr/sbin/policy-rc.d rc=0
    if [[ -e $policy ]]; then
        "$policy" avahi-daemon start >/dev/null 2>&1 || rc=$?
        ((rc == 101)) && return 0
        policy_backup=$policy.lansession-saved
        mv "$policy" "$policy_backup"
    fi
    printf '#!/bin/sh\n# Temporary: no service starts while the LanSession scripts install packages.\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    policy_created=1
}

restore_policy() {
    local policy=/usr/sbin/policy-rc.d
    if ((policy_created)); then
        rm -f "$policy"
        policy_created=0
    fi
    if [[ -n $policy_backup ]]; then
        mv "$policy_backup" "$policy"
        policy_backup=""
    fi
}

install_packages() {
    local before pid
    before=" $(root_netns_avahi_pids | tr '\n' ' ') "
    echo "installing ${*}" >&2
    block_service_starts
    export DEBIAN_FRONTEND=noninteractive
    timeout -k 10 600 apt-get update -qq >&2 || die "apt-get update failed"
    timeout -k 10 900 apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=120 "$@" >&2 ||
        die "apt-get install $* failed"
    restore_policy
    # Installing must not have started a daemon in the machine's own network namespace. Should it have happened
    # anyway, that daemon is this installation's doing: stop it and fail.
    for pid in $(root_netns_avahi_pids); do
        if [[ $before != *" $pid "* ]]; then
            kill "$pid" 2>/dev/null || true
            die "installing started avahi-daemon (pid $pid) in the machine's network namespace; stopped it"
        fi
    done
}

# Selenium from PyPI, which drives the page's checks and benchmark in headless Chromium, unless it is there already.
ensure_selenium() {
    python3 -c 'import selenium' 2>/dev/null && return 0
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore 'selenium==4.51.0' \
        || die "cannot install selenium from PyPI"
}

# Installs those of the given Debian packages that are not installed yet (needs root).
ensure_packages() {
    local -a missing=()
    local package
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    ((${#missing[@]})) || return 0
    [[ $(id -u) -eq 0 ]] || die "missing Debian packages: ${missing[*]}; run as root or install them first"
    install_packages "${missing[@]}"
}
