#!/usr/bin/env bash
# Make this machine able to run `--backend docker`: install Debian's docker.io and mmdebstrap, start a
# daemon that works without a bridge network, and build the local Python base image when it is missing
# (Debian's python3 with venv/pip/headers, patch, g++ and ninja: everything images/torch needs offline).
# Idempotent: every step is skipped when its result is already there. Used by .ci/run and by developers.
#
# Environment:
#   REPRO_BASE_IMAGE   tag of the local base image           (default localbase/python:3.11)
#   DEBIAN_MIRROR      mirror mmdebstrap installs from        (default http://deb.debian.org/debian)
#   DEBIAN_SECURITY    security mirror                        (default http://deb.debian.org/debian-security)
#   DEBIAN_SUITE       Debian suite of the base image         (default bookworm; python3 there is 3.11)
#   DOCKERD_LOG        where a daemon started here logs       (default /var/log/repro-matrix-dockerd.log)
# Options:
#   --no-base          only install and start the daemon
set -euo pipefail

BASE_IMAGE=${REPRO_BASE_IMAGE:-localbase/python:3.11}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
SUITE=${DEBIAN_SUITE:-bookworm}
DOCKERD_LOG=${DOCKERD_LOG:-/var/log/repro-matrix-dockerd.log}
WANT_BASE=1

for arg in "$@"; do
    case "$arg" in
        --no-base) WANT_BASE=0 ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "docker-setup: unknown option $arg" >&2; exit 2 ;;
    esac
done

say() { printf 'docker-setup: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

# Any docker CLI can talk to the daemon; prefer Debian's (it matches the 20.10 engine).
DOCKER=docker
[ -x /usr/bin/docker ] && DOCKER=/usr/bin/docker

as_root() {
    [ "$(id -u)" -eq 0 ] || die "$* needs root (re-run this script with sudo)"
}

install_packages() {
    local missing=()
    command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
    if [ "$WANT_BASE" -eq 1 ]; then
        command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
    fi
    if [ "${#missing[@]}" -eq 0 ]; then
        say "packages present (dockerd, mmdebstrap)"
        return
    fi
    as_root "installing ${missing[*]}"
    local t0; t0=$(now)
    say "installing ${missing[*]} with apt-get"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    [ -x /usr/bin/docker ] && DOCKER=/usr/bin/docker
    say "installed ${missing[*]} in $(since "$t0")"
}

daemon_up() { "$DOCKER" info >/dev/null 2>&1; }

start_daemon() {
    if daemon_up; then
        say "daemon already reachable ($("$DOCKER" version -f '{{.Server.Version}}' 2>/dev/null))"
        return
    fi
    [ -n "${DOCKER_HOST:-}" ] && die "DOCKER_HOST=$DOCKER_HOST is not reachable; unset it to use the local daemon"
    as_root "starting dockerd"
    if pgrep -x dockerd >/dev/null; then
        say "a dockerd process exists but does not answer yet; waiting for it"
    else
        # No bridge and no iptables: this machine cannot create either. Containers use --network none|host.
        local t0; t0=$(now)
        say "starting dockerd --bridge=none --iptables=false (log: $DOCKERD_LOG)"
        setsid dockerd --bridge=none --iptables=false >>"$DOCKERD_LOG" 2>&1 < /dev/null &
        disown || true
        wait_for_daemon 60 || { tail -n 20 "$DOCKERD_LOG" >&2; die "dockerd did not come up in 60 s"; }
        say "daemon up in $(since "$t0")"
        return
    fi
    wait_for_daemon 60 || die "the running dockerd did not answer within 60 s; see $DOCKERD_LOG"
}

wait_for_daemon() {
    local limit=$1 i=0
    while ! daemon_up; do
        i=$((i + 1))
        [ "$i" -gt $((limit * 5)) ] && return 1
        sleep 0.2
    done
}

build_base() {
    if "$DOCKER" image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
        say "base image $BASE_IMAGE present"
        return
    fi
    command -v mmdebstrap >/dev/null 2>&1 || die "mmdebstrap is missing (apt-get install mmdebstrap)"
    local t0 tmp; t0=$(now)
    tmp=$(mktemp -d)
    # shellcheck disable=SC2064
    trap "rm -rf '$tmp'" EXIT
    say "building $BASE_IMAGE from $SUITE ($MIRROR) with mmdebstrap"
    # Written to a file first: a failed mmdebstrap piped straight into `docker import` would leave a
    # half-filled image behind under the final tag.
    mmdebstrap --quiet --variant=minbase \
        --include=ca-certificates,python3,python3-venv,python3-pip,python3-dev,patch,g++,ninja-build \
        --dpkgopt='path-exclude=/usr/share/man/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' \
        --dpkgopt='path-exclude=/usr/share/doc/*' \
        --setup-hook="echo 'deb $MIRROR $SUITE-updates main' >> \"\$1/etc/apt/sources.list\"" \
        --setup-hook="echo 'deb $SECURITY $SUITE-security main' >> \"\$1/etc/apt/sources.list\"" \
        --customize-hook='rm -f "$1"/usr/lib/python3*/EXTERNALLY-MANAGED' \
        --customize-hook='ln -sf /usr/bin/python3 "$1"/usr/local/bin/python; ln -sf /usr/bin/pip3 "$1"/usr/local/bin/pip' \
        --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
        "$SUITE" "$tmp/rootfs.tar" "$MIRROR"
    "$DOCKER" import \
        -c 'CMD ["python3"]' -c 'ENV LANG=C.UTF-8' \
        -c "LABEL repro-matrix.base.suite=$SUITE repro-matrix.base.builder=mmdebstrap" \
        "$tmp/rootfs.tar" "$BASE_IMAGE" >/dev/null
    rm -rf "$tmp"
    trap - EXIT
    local size python
    size=$("$DOCKER" image inspect -f '{{.Size}}' "$BASE_IMAGE")
    python=$("$DOCKER" run --rm --network none "$BASE_IMAGE" python3 -c 'import sys; print(sys.version.split()[0])')
    say "built $BASE_IMAGE (python $python, $((size / 1000000)) MB) in $(since "$t0")"
}

install_packages
start_daemon
[ "$WANT_BASE" -eq 1 ] && build_base
say "ready: $("$DOCKER" version -f 'engine {{.Server.Version}}, API {{.Server.APIVersion}}')"
