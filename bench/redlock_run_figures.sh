#!/usr/bin/env bash
# redlock-run's figures (docs/cli.md): 3 local masters on Unix sockets, 9 runs of each case,
# medians and every value.
#   conflict   --wait 0 against a held key: from start to exit (process start, connecting,
#              the few quick attempts)
#   hand-off   a waiter (--wait 30s) behind a holder whose COMMAND is `sleep 1`: from the
#              holder's COMMAND ending to the waiter's COMMAND starting
#   take-over  --ttl 3s (extended every second), the key overwritten on 2 of the 3 masters:
#              from the overwrite to redlock-run's exit (79)
# Usage: bash bench/redlock_run_figures.sh [path/to/redlock-run]   (default build/tools/redlock-run)
set -euo pipefail
R=$(realpath "${1:-build/tools/redlock-run}")
dir=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$dir"; }
trap cleanup EXIT
uris=()
for i in 1 2 3; do
    redis-server --port 0 --unixsocket "$dir/$i.sock" --save "" --appendonly no --logfile "$dir/$i.log" &
    pids+=($!)
    uris+=("unix://$dir/$i.sock")
done
for i in 1 2 3; do
    for _ in $(seq 100); do redis-cli -s "$dir/$i.sock" ping >/dev/null 2>&1 && break; sleep 0.05; done
done
export REDLOCK_MASTERS="${uris[*]}"
on_all() { for i in 1 2 3; do redis-cli -s "$dir/$i.sock" "$@" >/dev/null; done; }
now() { date +%s.%N; }
ms() { echo "($1 - $2) * 1000" | bc -l; }
median() { sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]}'; }
conflict=() handoff=() takeover=()
for _ in $(seq 9); do
    on_all set job held PX 60000
    t0=$(now); rc=0; "$R" job -- true || rc=$?; t1=$(now)
    [ "$rc" -eq 75 ] || { echo "conflict: exit $rc"; exit 1; }
    conflict+=("$(ms "$t1" "$t0")")
    on_all del job

    "$R" job -- sh -c "sleep 1; date +%s.%N > $dir/held-until" & holder=$!
    sleep 0.2
    "$R" --wait 30s job -- sh -c "date +%s.%N > $dir/got-at"
    wait "$holder"
    handoff+=("$(ms "$(cat "$dir/got-at")" "$(cat "$dir/held-until")")")

    ( rc=0; "$R" --ttl 3s job -- sleep 20 || rc=$?; echo "$rc" > "$dir/rc"; now > "$dir/ended" ) & run=$!
    sleep 0.3
    stolen=$(now)
    for i in 1 2; do redis-cli -s "$dir/$i.sock" set job thief >/dev/null; done
    wait "$run"
    [ "$(cat "$dir/rc")" = 79 ] || { echo "take-over: exit $(cat "$dir/rc")"; exit 1; }
    takeover+=("$(ms "$(cat "$dir/ended")" "$stolen")")
    on_all del job
done
printf 'conflict, start to exit (ms):     median %s; all %s\n' "$(printf '%s\n' "${conflict[@]}" | median)" "$(printf '%.0f ' "${conflict[@]}")"
printf 'hand-off, end to start (ms):      median %s; all %s\n' "$(printf '%s\n' "${handoff[@]}" | median)" "$(printf '%.1f ' "${handoff[@]}")"
printf 'take-over to exit 79 (ms):        median %s; all %s\n' "$(printf '%s\n' "${takeover[@]}" | median)" "$(printf '%.0f ' "${takeover[@]}")"
