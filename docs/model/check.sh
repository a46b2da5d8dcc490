#!/usr/bin/env bash
# Model-checks docs/model/fenced_redlock.pml with spin (Debian package `spin`), each check with
# the outcome it must have:
#
#   fencing     the fenced algorithm, exhaustive: Unique and Ordered hold (no error)
#   reach       every acquisition of every client can succeed: "violated" (such a run exists),
#               so that the properties above are not true only because nobody ever holds
#   mutex       the same algorithm checked for mutual exclusion: violated (a pause)
#   incr-max    "INCR on every master that granted, take the largest": Unique violated
#   restart     a master restarting without persistence: Unique or Ordered violated
#   mut-commit  mutation: round 2 without its majority test: Unique or Ordered violated
#   mut-t-max   mutation: t = max instead of max + 1, checked for reachability: "holds" (no
#               acquisition can succeed any more, so the mutation is caught)
#
# Bounds (N masters, C clients, ROUNDS acquisitions per client, TTL and MAXT in clock ticks)
# are chosen so that the whole run takes about half a minute and 1.5 GB; pass e.g.
# `MAXT=5 ROUNDS=2 BITSTATE=1` for a larger, hash-compacted (approximate) search.
# Prints one line per check; exits 1 when a check's outcome is not the expected one.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/fenced_redlock.pml" "$work/"
cd "$work"

failed=0
# check NAME EXPECT(holds|violated) SPIN-DEFINES...
check() {
    local name=$1 expect=$2
    shift 2
    spin "$@" -a fenced_redlock.pml >spin.log 2>&1 || { cat spin.log; failed=1; return; }
    local cflags=(-O2 -DSAFETY -DCOLLAPSE -w)
    [[ ${BITSTATE:-0} == 1 ]] && cflags=(-O2 -DSAFETY -DBITSTATE -w)
    gcc "${cflags[@]}" -o "pan_$name" pan.c
    local t0 t1 out
    t0=$(date +%s.%N)
    out=$("./pan_$name" -m100000 -w28 2>&1 || true)
    t1=$(date +%s.%N)
    local errors states what
    errors=$(grep -oE 'errors: [0-9]+' <<<"$out" | grep -oE '[0-9]+$' || echo '?')
    states=$(grep -oE '^ *[0-9.e+]+ states, stored' <<<"$out" | grep -oE '[0-9.e+]+' | head -1 || echo '?')
    what=$(grep -m1 -oE 'assertion violated.*\(at depth [0-9]+\)' <<<"$out" || true)
    local got=holds
    [[ $errors != 0 ]] && got=violated
    local verdict=ok
    if [[ $got != "$expect" || $errors == '?' ]]; then
        verdict=UNEXPECTED
        failed=1
    fi
    printf 'model %-9s %-10s (expected %s): %s states, %.1f s%s [%s] (%s)\n' "$name" "$got" "$expect" \
        "$states" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "${what:+; $what}" "$verdict" "$*"
    if [[ $verdict != ok ]]; then
        tail -30 <<<"$out"
    fi
}

n=${N:-3} c=${C:-2} ttl=${TTL:-2}
check fencing holds -DN=$n -DC=$c -DTTL=$ttl -DROUNDS=${ROUNDS:-1} -DMAXT=${MAXT:-4}
check reach violated -DCHECK_REACH -DN=$n -DC=$c -DTTL=$ttl -DROUNDS=${ROUNDS:-1} -DMAXT=${MAXT:-4}
check mutex violated -DCHECK_ME -DN=$n -DC=$c -DTTL=$ttl -DROUNDS=1 -DMAXT=4
check incr-max violated -DINCR_MAX -DN=$n -DC=$c -DTTL=$ttl -DROUNDS=2 -DMAXT=4
check restart violated -DRESTART -DN=$n -DC=$c -DTTL=$ttl -DROUNDS=1 -DMAXT=4
check mut-commit violated -DMUT_NO_COMMIT_MAJORITY -DN=$n -DC=$c -DTTL=$ttl -DROUNDS=${ROUNDS:-1} -DMAXT=${MAXT:-4}
check mut-t-max holds -DMUT_T_MAX -DCHECK_REACH -DN=$n -DC=$c -DTTL=$ttl -DROUNDS=${ROUNDS:-1} -DMAXT=${MAXT:-4}
exit $failed
