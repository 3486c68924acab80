# benchmarks/lib/common.sh - shared shell helpers for the comparison lab (sourced, never run).
# Owns: where things live (repo root, cache dir), building the startup probe when meson has
# not, and idempotent Debian package installs. Never touches git state or src/.

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO_ROOT=$(cd "$BENCH_DIR/.." && pwd)
BENCH_CACHE=${BENCH_CACHE:-$BENCH_DIR/.cache}

log() { printf '[bench %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }

# Prints the path of a startup_probe binary: meson's (build/benchmarks/startup_probe)
# when it is newer than the source, else one compiled with cc into the cache.
startup_probe_path() {
    local src=$BENCH_DIR/startup.c b
    for b in "${STARTUP_PROBE:-}" "$REPO_ROOT/build/benchmarks/startup_probe"; do
        if [[ -n $b && -x $b && $b -nt $src ]]; then echo "$b"; return 0; fi
    done
    b=$BENCH_CACHE/startup_probe
    if [[ ! -x $b || $src -nt $b ]]; then
        mkdir -p "$BENCH_CACHE"
        ${CC:-cc} -O2 -std=gnu17 -Wall -Wextra -o "$b.tmp" "$src" || return 1
        mv "$b.tmp" "$b"
    fi
    echo "$b"
}

# apt_ensure PKG...: installs the Debian packages that are missing; no-op when all are there.
apt_ensure() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
    done
    ((${#missing[@]})) || return 0
    log "installing Debian packages: ${missing[*]}"
    local sudo=""; ((EUID)) && sudo=sudo
    DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}" >&2 ||
        { DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 update >&2 &&
          DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}" >&2; }
}
