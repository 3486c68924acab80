# benchmarks/lib/common.sh - shared shell helpers for the comparison lab (sourced, never run).
# Owns: where things live (repo root, cache dir), building the startup probe when meson has
# not, and idempotent Debian package installs. Never touches git state or src/.

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO_ROOT=$(cd "$BENCH_DIR/.." && pwd)
BENCH_CACHE=${BENCH_CACHE:-$BENCH_DIR/.cache}

log() { printf '[bench %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }

# tool_path SOURCE NAME: prints the path of benchmarks/SOURCE.c built as NAME: meson's
# (build/benchmarks/NAME, or $TOOL_<NAME>) when it is newer than the source, else one compiled
# with cc into the cache.
tool_path() {
    local src=$BENCH_DIR/$1.c name=$2 b var
    var=TOOL_${name^^}
    for b in "${!var:-}" "$REPO_ROOT/build/benchmarks/$name"; do
        if [[ -n $b && -x $b && $b -nt $src ]]; then echo "$b"; return 0; fi
    done
    b=$BENCH_CACHE/$name
    if [[ ! -x $b || $src -nt $b ]]; then
        mkdir -p "$BENCH_CACHE"
        ${CC:-cc} -O2 -std=gnu17 -Wall -Wextra -o "$b.tmp.$$" "$src" || return 1
        mv "$b.tmp.$$" "$b"
    fi
    echo "$b"
}

# The startup_probe binary (benchmarks/startup.c); STARTUP_PROBE overrides.
startup_probe_path() { TOOL_STARTUP_PROBE=${STARTUP_PROBE:-} tool_path startup startup_probe; }

# apt_ensure PKG...: installs the Debian packages that are missing (through profiles/deps, the
# project's one installer); no-op when all are there.
apt_ensure() { "$REPO_ROOT/profiles/deps" "$@"; }
