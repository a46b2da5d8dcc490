#!/usr/bin/env bash
# Interop: a waiting redlock acquisition is woken by node-redlock's release.
#
#   redlock-with-masters --count 3 -- bash node_redlock_wake.sh REDLOCK_RUN WORK_DIR
#
# node-redlock (test/interop/node_redlock_holder.js) holds RESOURCE with a 60 s TTL.
# `redlock-run --wait 30s` asks for it, is refused, and watches the keys (client tracking: the
# 't' flag shows on a master). node-redlock then releases with its own script. The waiter must
# take the lock and run its command before its 30 s wait ends: the keys would only expire after
# 60 s, so nothing but the release can have woken it (a refused attempt's next try is scheduled
# at the keys' expiry). No wall-clock figure is asserted; the wait and the TTL are the bounds.
# At the end no key is left on any master.
#
# Needs node and npm; node-redlock and ioredis (the versions of bench/peers/package.json) are
# installed into WORK_DIR/node_modules. Exits 77 (skipped) when node or the npm registry is
# not available. Everything started here is stopped by PID, also on failure.
set -euo pipefail

run=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
resource=interop-node-wake

skip() { echo "skipped: $*"; exit 77; }
die() { echo "FAILED: $*" >&2; exit 1; }

command -v node >/dev/null || skip "node is not installed"
command -v npm >/dev/null || skip "npm is not installed"
[[ -n ${REDLOCK_MASTERS:-} ]] || die "REDLOCK_MASTERS is not set (run under redlock-with-masters)"

mkdir -p "$work"
if [[ ! -d $work/node_modules/redlock || ! -d $work/node_modules/ioredis ]]; then
    cp "$here/../../bench/peers/package.json" "$work/package.json"
    (cd "$work" && timeout 300 npm install --no-audit --no-fund --no-package-lock --loglevel=error) ||
        skip "npm could not install node-redlock and ioredis (no registry?)"
fi
export NODE_PATH=$work/node_modules

IFS=, read -r -a uris <<<"$REDLOCK_MASTERS"
# redis://127.0.0.1:PORT -> the host and port, for redis-cli.
cli() {
    local u=${1#redis://}
    shift
    redis-cli -h "${u%:*}" -p "${u##*:}" "$@"
}

holder=""
waiter=""
cleanup() {
    local p
    for p in $holder $waiter; do kill "$p" 2>/dev/null || true; done
    for p in $holder $waiter; do wait "$p" 2>/dev/null || true; done
    { exec 3>&- 4<&-; } 2>/dev/null || true
}
trap cleanup EXIT

# The holder: its standard input is a FIFO we write the "release" line to.
fifo_in=$work/holder.in
fifo_out=$work/holder.out
rm -f "$fifo_in" "$fifo_out"
mkfifo "$fifo_in" "$fifo_out"
node "$here/node_redlock_holder.js" "$resource" 60000 <"$fifo_in" >"$fifo_out" &
holder=$!
exec 3>"$fifo_in" 4<"$fifo_out"
read -r -t 30 word value <&4 || die "node-redlock did not report the lock held"
[[ $word == held ]] || die "node-redlock said: $word $value"
echo "node-redlock holds $resource with value $value"

# The waiter.
out=$work/waiter.out
"$run" --wait 30s --ttl 5s "$resource" -- sh -c 'echo ran' >"$out" 2>&1 &
waiter=$!

# Its attempt was refused and it watches: tracking shows on some master. (Tracking is turned on
# only by a waiting acquisition, after a refusal.)
tracking() {
    local u
    for u in "${uris[@]}"; do
        # (grep without -q reads to the end: redis-cli is not cut off by SIGPIPE under pipefail)
        cli "$u" CLIENT LIST | grep ' flags=t ' >/dev/null && return 0
    done
    return 1
}
for _ in $(seq 300); do
    tracking && break
    kill -0 "$waiter" 2>/dev/null || die "the waiter ended before waiting: $(cat "$out")"
    sleep 0.1
done
tracking || die "the waiter did not start watching within 30 s"
echo "the waiter is watching"

# Every master still holds node-redlock's value: the waiter took nothing meanwhile.
for u in "${uris[@]}"; do
    [[ $(cli "$u" GET "$resource") == "$value" ]] || die "a master does not hold node-redlock's value"
done

echo release >&3
read -r -t 30 word <&4 || die "node-redlock did not report the release"
[[ $word == released ]] || die "node-redlock said: $word"
echo "node-redlock released"

status=0
wait "$waiter" || status=$?
waiter=
[[ $status == 0 ]] || die "redlock-run exited $status (75: its wait ended before it was woken): $(cat "$out")"
grep -qx ran "$out" || die "the waiter's command did not run: $(cat "$out")"
echo "the waiter was woken by the release and ran its command"

# node-redlock's release may resolve before its delete has reached every master (the waiter
# only needed a majority): what is still in flight gets up to 2 s. A key that either side
# leaked would outlive that (node-redlock's TTL is 60 s, redlock-run's its --ttl).
for u in "${uris[@]}"; do
    left=$(cli "$u" KEYS '*')
    for _ in $(seq 20); do
        [[ -z $left ]] && break
        sleep 0.1
        left=$(cli "$u" KEYS '*')
    done
    [[ -z $left ]] || die "keys left on $u: $left (value $(cli "$u" GET "$resource"), node-redlock's $value; PTTL $(cli "$u" PTTL "$resource") ms)"
done
echo "no key left"
