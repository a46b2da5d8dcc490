#!/usr/bin/env bash
# The holders' witness beside paused masters (docs/performance.md, "Semaphores and read-write
# locks"): a counting semaphore of 2 permits on 5 local masters, W workers on one resource
# each holding 2 ms, the library's semaphore (A) and the majority-counting one
# (--unsafe-majority-semaphore, B) alternated A B A B in one run, under three patterns:
#   none       no pause, --ttl 10000 (the bench's default)
#   pause      now and then one master, in turn, SIGSTOPped for 300-800 ms, then 700-1700 ms
#              with none paused; --ttl 10000: a pause outlasts the attempt timeout (TTL / 20,
#              at most 200 ms), so each attempt is decided by the other 4, and is far shorter
#              than the TTL, so the paused master keeps its keys through it
#   pause-ttl  the same pauses, --ttl 500: the attempt timeout is 25 ms and a pause is near or
#              past the TTL, so the paused master's keys often expire (by its clock) while it
#              is stopped
# Each run: --workers W --resources 1 --permits 2 --hold 2 --warmup 0 --duration DURATION.
# Prints every run and, per pattern, workers and variant, the medians over the rounds of the
# acquisitions, those that saw more than 2 holders, the most holders seen, acquisitions/s,
# and the share of the run's time a master was paused.
# Usage: bash bench/semaphore_pause_figures.sh [path/to/redlock-bench]
#        (default build/bench/redlock-bench; ROUNDS=5 DURATION=10 WORKERS="3 8" PATTERNS=...;
#        KEEP=DIR keeps each run's JSON and output, the pause log and the table there)
set -euo pipefail
B=$(realpath "${1:-build/bench/redlock-bench}")
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-10}
WORKERS=${WORKERS:-"3 8"}
PATTERNS=${PATTERNS:-"none pause pause-ttl"}
dir=$(mktemp -d)
servers=()
pauser=
cleanup() {
    if [ -n "$pauser" ]; then kill "$pauser" 2>/dev/null || true; wait "$pauser" 2>/dev/null || true; fi
    for p in "${servers[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
    for p in "${servers[@]}"; do wait "$p" 2>/dev/null || true; done
    if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp -r "$dir"/. "$KEEP"/; fi
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 5 masters on free loopback ports, stopped by PID at the end.
M=()
port=$((20000 + RANDOM % 20000))
while [ "${#servers[@]}" -lt 5 ]; do
    port=$((port + 1))
    redis-cli -p "$port" ping >/dev/null 2>&1 && continue
    redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
        --logfile "$dir/$port.log" &
    servers+=($!)
    for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
    M+=(--master "redis://127.0.0.1:$port")
done
echo "masters: ${M[*]} (pids ${servers[*]})"

now() { date +%s.%N; }
secs() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }
# One master at a time, in turn: STOP for 300-800 ms, CONT, 700-1700 ms with none paused. Each
# pause is logged as "start end master". On TERM it resumes the paused master and ends.
pause_loop() {
    local k=0 p=
    trap '[ -n "$p" ] && kill -CONT "$p"; exit 0' TERM
    while :; do
        sleep "$(secs $((700 + RANDOM % 1001)))"
        p=${servers[$((k % 5))]}; k=$((k + 1))
        local t0; t0=$(now)
        kill -STOP "$p"
        sleep "$(secs $((300 + RANDOM % 501)))"
        kill -CONT "$p"
        echo "$t0 $(now) $p" >> "$dir/pauses"
        p=
    done
}

: > "$dir/runs"
for pattern in $PATTERNS; do
    case $pattern in
        none) ttl=10000 ;;
        pause) ttl=10000 ;;
        pause-ttl) ttl=500 ;;
        *) echo "unknown pattern $pattern"; exit 2 ;;
    esac
    if [ "$pattern" != none ]; then pause_loop & pauser=$!; fi
    for round in $(seq "$ROUNDS"); do
        for w in $WORKERS; do
            for variant in library unsafe; do
                extra=(); [ "$variant" = unsafe ] && extra=(--unsafe-majority-semaphore)
                j="$dir/$pattern-$w-$variant-$round.json"
                t0=$(now); rc=0
                timeout 120 "$B" "${M[@]}" --workers "$w" --resources 1 --permits 2 --hold 2 \
                    --ttl "$ttl" --warmup 0 --duration "$DURATION" "${extra[@]}" --json "$j" \
                    > "$j.out" 2>&1 || rc=$?
                echo "$pattern $w $variant $round $t0 $(now) $rc $j" >> "$dir/runs"
                [ -s "$j" ] || { echo "no JSON from $pattern $w $variant $round (exit $rc):"; cat "$j.out"; }
            done
        done
    done
    if [ -n "$pauser" ]; then kill "$pauser"; wait "$pauser" 2>/dev/null || true; pauser=; fi
    for p in "${servers[@]}"; do kill -CONT "$p"; done
done
touch "$dir/pauses"

# Per run: the share of its time a master was paused (overlap of the logged pauses).
paused_share() {
    awk -v a="$1" -v b="$2" '{ s = $1 > a ? $1 : a; e = $2 < b ? $2 : b; if (e > s) t += e - s }
        END { printf "%.2f", t / (b - a) }' "$dir/pauses"
}
median() { sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "-"}'; }
printf '%-9s %2s %-7s %5s %4s %8s %6s %4s %10s %6s %s\n' pattern W variant round exit acquired over2 most acq/s paused failed
while read -r pattern w variant round t0 t1 rc j; do
    [ -s "$j" ] || continue
    jq -r --arg p "$pattern" --arg w "$w" --arg v "$variant" --arg r "$round" --arg rc "$rc" \
        --arg ps "$(paused_share "$t0" "$t1")" \
        '[$p, $w, $v, $r, $rc, .acquired, .semaphore.violations, .semaphore.most_holders,
          .cycles_per_s, $ps, (.failed | to_entries | map("\(.key) \(.value)") | join(", "))]
         | @tsv' "$j"
done < "$dir/runs" | tee "$dir/table" |
    awk -F'\t' '{printf "%-9s %2s %-7s %5s %4s %8s %6s %4s %10.1f %6s %s\n", $1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11}'
echo
echo "medians over $ROUNDS rounds:"
printf '%-9s %2s %-7s %8s %6s %4s %10s %6s\n' pattern W variant acquired over2 most acq/s paused
for pattern in $PATTERNS; do for w in $WORKERS; do for variant in library unsafe; do
    rows=$(awk -F'\t' -v p="$pattern" -v w="$w" -v v="$variant" '$1==p && $2==w && $3==v' "$dir/table")
    [ -n "$rows" ] || continue
    col() { cut -f"$1" <<< "$rows" | median; }
    printf '%-9s %2s %-7s %8s %6s %4s %10.1f %6s\n' "$pattern" "$w" "$variant" "$(col 6)" "$(col 7)" \
        "$(col 8)" "$(col 9)" "$(col 10)"
done; done; done
