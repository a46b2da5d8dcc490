#!/usr/bin/env bash
# Model-checks the models in docs/model with spin (Debian package `spin`), each check with the
# outcome it must have. fenced_redlock.pml (the mutex with fencing tokens):
#
#   fencing     the fenced algorithm, exhaustive: Unique and Ordered hold (no error)
#   reach       every acquisition of every client can succeed: "violated" (such a run exists),
#               so that the properties above are not true only because nobody ever holds
#   mutex       the same algorithm checked for mutual exclusion: violated (a pause)
#   incr-max    "INCR on every master that granted, take the largest": Unique violated
#   restart     a master restarting without persistence: Unique or Ordered violated
#   mut-commit  mutation: round 2 without its majority test: Unique or Ordered violated (2
#               acquisitions per client: with one each, the first always finds the counters
#               together, and no history reaches a round 2 that the mutation could spoil)
#   mut-t-max   mutation: t = max instead of max + 1: violated
#   mut-one-round  mutation: no round 2 even when the counters read differ: violated (2
#                  acquisitions per client, as mut-commit: counters apart, then two quorums)
#   mut-no-bump    mutation: round 1 reads the counter without moving it on, and a quorum that
#                  read one value takes it + 1 as its token in one round: violated
#
# semaphore.pml (N permits over M masters, "slot mutexes"; 3 masters, 2 permits, 3 clients):
#
#   sem-bounded     the design, exhaustive: at most N holders within validity, no two on one
#                   permit (Bounded, Distinct hold)
#   sem-reach       N clients can hold together: violated (so Bounded is not vacuous)
#   sem-majority    node redis-semaphore's RedlockSemaphore (each master admits N, a majority of
#                   admissions holds), 5 masters: Bounded violated (N+1 holders)
#   sem-majority3   the same with 3 masters: violated
#   mut-sem-sum     mutation: grants of different permits summed: Bounded violated
#   mut-sem-t0      mutation: validity counted from the replies, not t0: violated
#
# rwlock.pml (a writer key, a readers' set and a writer-intent marker per master; 3 masters):
#
#   rw-exclusive    the design, 1 writer and 2 readers, exhaustive: Exclusive holds
#   rw-writers      the same with 2 writers and 1 reader: holds
#   rw-reach        the two readers hold together, then the writer holds: violated (so the
#                   property is not vacuous and the readers do share)
#   rw-shared-ttl   the readers' set with one expiry, set by the reader that creates it:
#                   Exclusive violated (a writer beside a reader that joined later)
#   mut-rw-readers  mutation: the writer script ignores the readers: violated
#   mut-rw-writer   mutation: the reader script ignores the writer key: violated
#
# Bounds (fenced_redlock.pml: N masters, C clients, ROUNDS acquisitions per client, TTL and
# MAXT in clock ticks; the others: see each file) are chosen so that the whole run takes about
# a minute and 3.5 GB at its peak (the `fencing` check); pass e.g. `MAXT=5 ROUNDS=2 BITSTATE=1`
# for a larger, hash-compacted (approximate) search of fenced_redlock.pml.
# Prints one line per check (states stored, pan's time, its memory); exits 1 when a check's
# outcome is not the expected one, or when a search was cut short by its depth limit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$here/fenced_redlock.pml" "$here/semaphore.pml" "$here/rwlock.pml" "$work/"
cd "$work"

failed=0
# [MODEL=file.pml] [HASHW=28] [OPT=-O2] [COLLAPSE=1] check NAME EXPECT(holds|violated) SPIN-DEFINES...
# (MODEL defaults to fenced_redlock.pml; HASHW is pan's -w, the log2 of its hash table's slots;
# OPT -O0 compiles faster, for checks whose search is short; COLLAPSE=0 stores states
# uncompressed: a quarter faster, twice the memory)
check() {
    local name=$1 expect=$2
    shift 2
    local model=${MODEL:-fenced_redlock.pml} hashw=${HASHW:-28} opt=${OPT:--O2}
    spin "$@" -a "$model" >spin.log 2>&1 || { cat spin.log; failed=1; return; }
    local cflags=("$opt" -DSAFETY -DCOLLAPSE -w)
    [[ ${COLLAPSE:-1} == 0 ]] && cflags=("$opt" -DSAFETY -w)
    [[ ${BITSTATE:-0} == 1 && $model == fenced_redlock.pml ]] && cflags=(-O2 -DSAFETY -DBITSTATE -w)
    gcc "${cflags[@]}" -o "pan_$name" pan.c
    local t0 t1 out
    t0=$(date +%s.%N)
    out=$("./pan_$name" -m100000 -w"$hashw" 2>&1 || true)
    t1=$(date +%s.%N)
    local errors states what mem
    errors=$(grep -oE 'errors: [0-9]+' <<<"$out" | grep -oE '[0-9]+$' || echo '?')
    states=$(grep -oE '^ *[0-9.e+]+ states, stored' <<<"$out" | grep -oE '[0-9.e+]+' | head -1 || echo '?')
    mem=$(grep -oE '^ *[0-9.]+[[:space:]]+total actual memory usage' <<<"$out" | grep -oE '[0-9]+' | head -1 || echo '?')
    what=$(grep -m1 -oE 'assertion violated.*\(at depth [0-9]+\)' <<<"$out" || true)
    local got=holds
    [[ $errors != 0 ]] && got=violated
    local verdict=ok
    if [[ $got != "$expect" || $errors == '?' ]]; then
        verdict=UNEXPECTED
        failed=1
    fi
    if grep -q 'max search depth too small' <<<"$out"; then
        verdict="UNEXPECTED: search cut short, raise -m"
        failed=1
    fi
    local where=$*
    [[ $model != fenced_redlock.pml ]] && where="$model $where"
    printf 'model %-9s %-10s (expected %s): %s states, %.1f s, %s MB%s [%s] (%s)\n' "$name" "$got" "$expect" \
        "$states" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$mem" "${what:+; $what}" "$verdict" "$where"
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
check mut-commit violated -DMUT_NO_COMMIT_MAJORITY -DN=$n -DC=$c -DTTL=$ttl -DROUNDS=2 -DMAXT=4
check mut-t-max violated -DMUT_T_MAX -DN=$n -DC=$c -DTTL=$ttl -DROUNDS=${ROUNDS:-1} -DMAXT=${MAXT:-4}
check mut-one-round violated -DMUT_ONE_ROUND_ANY -DN=$n -DC=$c -DTTL=$ttl -DROUNDS=2 -DMAXT=4
check mut-no-bump violated -DMUT_NO_BUMP -DN=$n -DC=$c -DTTL=$ttl -DROUNDS=${ROUNDS:-1} -DMAXT=${MAXT:-4}

# semaphore.pml: 3 masters, 2 permits, 3 clients, TTL 2 ticks, up to 1 lost message a run.
sem=(-DM=3 -DN=2 -DC=3 -DTTL=2 -DLOSSES=1)
MODEL=semaphore.pml HASHW=24 COLLAPSE=0 check sem-bounded holds "${sem[@]}"
MODEL=semaphore.pml HASHW=20 OPT=-O0 check sem-reach violated -DCHECK_REACH "${sem[@]}"
MODEL=semaphore.pml HASHW=20 OPT=-O0 check sem-majority violated -DMAJORITY_COUNT -DM=5 -DN=2 -DC=3 -DTTL=2 -DLOSSES=1
MODEL=semaphore.pml HASHW=20 OPT=-O0 check sem-majority3 violated -DMAJORITY_COUNT "${sem[@]}"
MODEL=semaphore.pml HASHW=20 OPT=-O0 check mut-sem-sum violated -DMUT_SUM_PERMITS "${sem[@]}"
MODEL=semaphore.pml HASHW=20 OPT=-O0 check mut-sem-t0 violated -DMUT_LATE_T0 "${sem[@]}"

# rwlock.pml: 3 masters, 1 writer and 2 readers (or 2 and 1), TTL 2 ticks, up to 1 lost message.
rw=(-DM=3 -DTTL=2 -DLOSSES=1)
MODEL=rwlock.pml HASHW=22 check rw-exclusive holds -DW=1 -DR=2 "${rw[@]}"
MODEL=rwlock.pml HASHW=22 check rw-writers holds -DW=2 -DR=1 "${rw[@]}"
MODEL=rwlock.pml HASHW=20 OPT=-O0 check rw-reach violated -DCHECK_REACH -DW=1 -DR=2 "${rw[@]}"
MODEL=rwlock.pml HASHW=20 OPT=-O0 check rw-shared-ttl violated -DSHARED_READ_TTL -DW=1 -DR=2 "${rw[@]}"
MODEL=rwlock.pml HASHW=20 OPT=-O0 check mut-rw-readers violated -DMUT_WRITER_IGNORES_READERS -DW=1 -DR=2 "${rw[@]}"
MODEL=rwlock.pml HASHW=20 OPT=-O0 check mut-rw-writer violated -DMUT_READER_IGNORES_WRITER -DW=1 -DR=2 "${rw[@]}"
exit $failed
