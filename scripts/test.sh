#!/usr/bin/env bash
# The test command: installs what is missing, then runs five stages, each with its own build
# directory, and fails if any of them fails:
#
#   normal  RelWithDebInfo build (-O2; the test programs and examples -Og) with warnings as errors, the whole
#           CTest suite (unit, live against real redis-server masters the tests start
#           themselves, fake-server tests, the tool tests of redlock-run, the install and
#           package checks, the API reference check, the bench smoke runs, the examples, the
#           C++ samples of README.md and docs/ (test/docs/: compiled, matched to examples/, run), the
#           interop test with node-redlock, which installs node-redlock from the npm registry and
#           is skipped when it cannot). The unit and live tests run one at a time, the others two
#           at a time.
#   asan    ASan+UBSan build with warnings as errors (-Og: library, unit and live tests), their
#           CTest tests: not the torture test, install check and demo, to which sanitizers add
#           nothing but time. LSan checks for leaks.
#   tsan    TSan build (-Og: library, and the live test files it runs), the connection,
#           client, fake-server, multi-threaded ([tsan]), holder (hold:, with_lock:) and waiting
#           (wait:) live tests; the [tsan] ones with the io_context on 4 threads.
#   fuzz    clang + libFuzzer build of test/fuzz/, each target fuzzed for a bounded time
#           (REDLOCK_FUZZ_SECONDS, default 60; both at once, one per core).
#   model   spin on docs/model/ (docs/model/check.sh): the fencing design's, the semaphore's
#           and the read-write lock's properties hold, and the known failures are found (about
#           100 s of CPU; the fencing check peaks at 3.3 GB). It runs in the background during
#           the earlier stages' tests (below).
#
# The first stage builds on both cores; then its tests run while one background queue builds
# the later stages in order, at idle CPU priority (see "the stages, pipelined" below).
#
# Environment:
#   REDLOCK_TEST_STAGES   the stages to run, default "normal asan tsan fuzz model"
#   REDLOCK_FUZZ_SECONDS  seconds per fuzz target, default 60
#   REDLOCK_UNITY_BATCH   sources per unity translation unit, default 0 (one per target)
#   BUILD_DIR             the normal build directory (default build); the others are
#                         $BUILD_DIR-asan, $BUILD_DIR-tsan, $BUILD_DIR-fuzz
# Extra arguments go to the normal stage's ctest, e.g. bash scripts/test.sh -R '^unit:'.
#
# The normal and sanitizer stages build with CMAKE_UNITY_BUILD (a target's sources compiled a batch at a time: each
# parses Boost.Asio and the public headers once, not once per file; docs/reliability.md has the
# figures). Developers' own builds are not unity builds, so that a change recompiles one file.
#
# The last line is "N passed, N failed, N skipped": tests over all the CTest stages, plus one per
# fuzz target and per model check, and one failure per stage that failed before its tests could
# run. A test that reports itself skipped (the interop test without the npm registry, the
# package check without root) is counted as skipped, not passed.
set -euo pipefail
cd "$(dirname "$0")/.."

stages=${REDLOCK_TEST_STAGES:-normal asan tsan fuzz model}
fuzz_seconds=${REDLOCK_FUZZ_SECONDS:-60}
build=${BUILD_DIR:-build}
jobs=2
root=$PWD

bash scripts/install-deps.sh test
logs=$(mktemp -d)
queue_pid=''
trap '[[ -z $queue_pid ]] || stop_tree "$queue_pid"; rm -rf "$logs"' EXIT

total_passed=0
total_failed=0
total_skipped=0
summary=()
failed_tests=() # "stage: test name", from each ctest's "The following tests FAILED" list

header() {
    printf '\n======================================================================\n'
    printf '==== %s\n' "$*"
    printf '======================================================================\n'
}

# Runs ctest with the given arguments, streaming its output, and adds its counts to the totals.
# Returns ctest's status.
run_ctest() {
    local log
    log=$(mktemp)
    local rc=0
    ctest "$@" 2>&1 | tee "$log" || rc=$?
    local line
    line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1 || true)
    if [[ $line =~ ([0-9]+)\ tests?\ failed\ out\ of\ ([0-9]+) ]]; then
        local failed=${BASH_REMATCH[1]} all=${BASH_REMATCH[2]}
        # CTest counts a skipped test as passed; it lists it under "did not run" as (Skipped).
        local skipped
        skipped=$(grep -cE '^[[:space:]]*[0-9]+ - .* \(Skipped\)$' "$log" || true)
        total_passed=$((total_passed + all - failed - skipped))
        total_failed=$((total_failed + failed))
        total_skipped=$((total_skipped + skipped))
        ctest_counted=1
    fi
    local name
    while IFS= read -r name; do
        failed_tests+=("$s: $name")
    done < <(sed -n '/^The following tests FAILED:/,$p' "$log" |
        sed -nE 's/^[[:space:]]*[0-9]+ - (.*) \(([^()]*)\)$/\1 (\2)/p')
    rm -f "$log"
    return $rc
}

# configure DIR ARGS...: cmake's configure step; a new directory gets Ninja, which compiles the
# sources of several targets at once where make waits for each target's dependencies to be built
# (an existing directory keeps its generator).
configure() {
    local dir=$1 generator=()
    shift
    [[ -f $dir/CMakeCache.txt ]] || generator=(-G Ninja)
    cmake -S . -B "$dir" "${generator[@]}" "$@"
}

# ---- normal --------------------------------------------------------------------------------
normal_args=("$@")
# Unity builds: each target's sources compiled as one translation unit (batch size 0), which
# parses Boost.Asio, Catch2 and the public headers once per target and instantiates their
# templates once; measured in docs/reliability.md ("The test command's time").
unity=(-DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=${REDLOCK_UNITY_BATCH:-0})
# The programs that exercise the library (unit, live and tool tests, torture test, examples,
# support library) at -Og in every stage; the library, redlock-run and the benches keep the
# stage's level (-O2; the sanitizer stages build everything at -Og). The test programs' compile time is most of
# a build's (docs/reliability.md).
unity+=(-DREDLOCK_TEST_OPTIMIZATION=-Og)
# -g1 (line tables only) in the normal and sanitizer stages: stack traces and sanitizer reports
# keep their file and line, and the builds, which are most of a run's time, take about a fifth
# less CPU than with -g (one live test file under ASan: 38 s against 30 s at -O1, 66 s against 52 s at
# -O2).
build_normal() {
    configure "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
        "${unity[@]}" -DREDLOCK_WARNINGS_AS_ERRORS=ON &&
        cmake --build "$build" -j$jobs
}
# The unit and live tests one at a time, as they were written to run (the live tests have timing
# bounds); the others two at a time, the longest first (their COST), while the asan stage builds.
test_normal() {
    local ctest=(run_ctest --test-dir "$build" --output-on-failure --timeout 600)
    if ((${#normal_args[@]})); then
        "${ctest[@]}" -j$jobs "${normal_args[@]}"
        return
    fi
    local rc=0
    "${ctest[@]}" -j$jobs -E '^(unit|live):' || rc=$?
    "${ctest[@]}" -R '^(unit|live):' || rc=$?
    return $rc
}

# ---- asan ----------------------------------------------------------------------------------
# -Og, the library too: the sanitizers check the memory accesses the optimiser keeps, and -Og,
# which optimises less than -O1, keeps at least as many (-O1 is what the sanitizers' documentation
# suggests for speed, not for detection); the library's unity unit under ASan+UBSan takes 49 s of CPU at -Og against 78 s at
# -O1, under TSan 24 s against 31 s. The normal stage tests the library at -O2.
sanitizer_cmake=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-Og -g1"
                 "${unity[@]}" -DREDLOCK_WARNINGS_AS_ERRORS=ON
                 -DREDLOCK_BUILD_BENCH=OFF -DREDLOCK_BUILD_EXAMPLES=OFF)
build_asan() {
    configure "$build-asan" "${sanitizer_cmake[@]}" -DREDLOCK_SANITIZE=address,undefined &&
        cmake --build "$build-asan" -j$jobs --target redlock_unit_tests redlock_live_tests
}
test_asan() {
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1:strict_init_order=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        run_ctest --test-dir "$build-asan" --output-on-failure --timeout 900 -R '^(unit|live):'
}

# ---- tsan ----------------------------------------------------------------------------------
# Only the live test files whose groups test_tsan runs are built (the others hold the
# availability:, cluster:, multi:, check: and harness tests).
tsan_skipped_files='availability|client_cluster|cluster_harness|harness|hold_multi'
build_tsan() {
    configure "$build-tsan" "${sanitizer_cmake[@]}" -DREDLOCK_SANITIZE=thread \
        "-DREDLOCK_LIVE_TESTS_EXCLUDE=$tsan_skipped_files" &&
        cmake --build "$build-tsan" -j$jobs --target redlock_live_tests
}
test_tsan() {
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 history_size=4 suppressions=$root/test/tsan.supp" \
    REDLOCK_TEST_THREADS=4 \
        run_ctest --test-dir "$build-tsan" --output-on-failure --timeout 900 \
            -R '^live:(connection|client|fake server|threads|hold|with_lock|wait):'
}

# ---- fuzz ----------------------------------------------------------------------------------
build_fuzz() {
    configure "$build-fuzz" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DREDLOCK_BUILD_FUZZERS=ON -DREDLOCK_BUILD_TESTS=OFF -DREDLOCK_BUILD_BENCH=OFF \
        -DREDLOCK_BUILD_EXAMPLES=OFF -DREDLOCK_WARNINGS_AS_ERRORS=ON &&
        cmake --build "$build-fuzz" -j$jobs --target resp_parser_fuzz uri_fuzz
}
test_fuzz() {
    local dir=$build-fuzz
    local targets=(resp_parser uri) pids=() t
    for t in "${targets[@]}"; do
        # New inputs go to a scratch corpus; the committed seeds and regressions are read only.
        rm -rf "$dir/corpus/$t" "$dir/artifacts/$t"
        mkdir -p "$dir/corpus/$t" "$dir/artifacts/$t"
        ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
            "$dir/test/fuzz/${t}_fuzz" -max_total_time="$fuzz_seconds" -max_len=4096 -timeout=10 \
            -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$dir/artifacts/$t/" \
            "$dir/corpus/$t" "test/fuzz/corpus/$t" "test/fuzz/regressions/$t" \
            >"$dir/$t.log" 2>&1 &
        pids+=($!)
    done
    local i failed=0
    for i in "${!targets[@]}"; do
        t=${targets[$i]}
        if wait "${pids[$i]}"; then
            total_passed=$((total_passed + 1))
            local runs cov execs
            runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$dir/$t.log" | grep -oE '[0-9]+$' || echo '?')
            execs=$(grep -oE 'stat::average_exec_per_sec: *[0-9]+' "$dir/$t.log" | grep -oE '[0-9]+$' || echo '?')
            cov=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "$dir/$t.log" | tail -1 |
                  grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*' || echo '?')
            printf 'fuzz %-12s ok: %s runs in %s s (%s/s), %s\n' "$t" "$runs" "$fuzz_seconds" "$execs" "$cov"
        else
            total_failed=$((total_failed + 1))
            failed=1
            printf 'fuzz %-12s FAILED; the end of its log:\n' "$t"
            tail -60 "$dir/$t.log"
            printf 'The input is in %s/artifacts/%s/. Add it to test/fuzz/regressions/%s/ once fixed:\n' \
                "$dir" "$t" "$t"
            printf 'the unit test "fuzz regressions" replays every file there.\n'
        fi
    done
    ctest_counted=1
    return $failed
}

# ---- model ----------------------------------------------------------------------------------
# Nothing to build: the check itself (single-threaded, ~40 s, 1.5 GB) runs in the background
# queue like a build (below), while the asan and tsan stages' tests leave a core idle; its stage
# then reports the outcome.
build_model() {
    local rc=0
    bash docs/model/check.sh >"$logs/model.check" 2>&1 || rc=$?
    echo "$rc" >"$logs/model.rc"
}
test_model() {
    cat "$logs/model.check"
    total_passed=$((total_passed + $(grep -c '^model .*\[ok\]' "$logs/model.check" || true)))
    total_failed=$((total_failed + $(grep -c '^model .*\[UNEXPECTED\]' "$logs/model.check" || true)))
    grep -q '^model ' "$logs/model.check" && ctest_counted=1
    return "$(cat "$logs/model.rc")"
}

# ---- the stages, pipelined ---------------------------------------------------------------------
# The first stage builds in the foreground on both cores. From then on the foreground runs the
# tests, stage after stage, and one background queue builds the later stages, in order, at idle
# CPU priority (SCHED_IDLE, nice 19): it takes only the CPU the tests leave (they mostly wait on
# redis-server, timers and child processes: the asan stage's tests keep about half a core busy)
# and cannot slow them. A stage's tests start once its build is done; its build output is printed
# then. Each stage reports its build's and its tests' wall time and CPU (user + system).
# as_idle: this (sub)shell and what it starts from now on run at idle priority.
as_idle() {
    renice -n 19 -p "$BASHPID" >/dev/null || true
    chrt --idle -p 0 "$BASHPID" 2>/dev/null || true
}
# times_sum VAR [all]: sets VAR to the CPU seconds (user + system) of this shell's finished
# children so far, or with "all" of this shell's too. `times` has to run in this shell (in a
# $(...) subshell it would count that subshell's), hence a variable and not an output.
times_sum() {
    local file=$logs/times.$BASHPID
    times >"$file"
    printf -v "$1" '%s' "$(awk -v all="${2:-}" 'function s(x) { split(x, p, "m"); return p[1] * 60 + p[2] }
        NR == 2 || all { total += s($1) + s($2) } END { printf "%d", total }' "$file")"
}
# read_cpu: sets cpu to the CPU seconds of this shell's finished children, less the background
# queue's once it has ended (it ends during some stage's tests, and its builds are reported as
# builds). The queue writes its total to $logs/queue.cpu before it ends.
read_cpu() {
    local alive_before alive_after
    while :; do
        alive_before=0 alive_after=0
        [[ -n $queue_pid ]] && kill -0 "$queue_pid" 2>/dev/null && alive_before=1
        times_sum cpu
        [[ -n $queue_pid ]] && kill -0 "$queue_pid" 2>/dev/null && alive_after=1
        ((alive_before == alive_after)) && break # else it ended meanwhile: read again
    done
    if [[ -n $queue_pid ]] && ((!alive_after)) && [[ -f $logs/queue.cpu ]]; then
        cpu=$((cpu - $(cat "$logs/queue.cpu")))
    fi
}
# stop_tree PID: stops PID and what it started (the build queue, when the run ends early).
stop_tree() {
    local child
    for child in $(pgrep -P "$1" || true); do stop_tree "$child"; done
    kill "$1" 2>/dev/null || true
}
declare -A known=([normal]=1 [asan]=1 [tsan]=1 [fuzz]=1 [model]=1)
order=()
for s in $stages; do
    [[ ${known[$s]:-} ]] || { echo "unknown stage '$s' (known: normal asan tsan fuzz model)" >&2; exit 2; }
    order+=("$s")
done
# start_queue STAGE...: builds each STAGE in turn in the background, at idle priority; for each,
# $logs/STAGE.log holds the output and $logs/STAGE.done "SECONDS CPU STATUS" once it is over.
start_queue() {
    (
        as_idle
        local s
        for s in "$@"; do
            local start=$SECONDS before after rc=0
            times_sum before
            "build_$s" >"$logs/$s.log" 2>&1 || rc=$?
            times_sum after
            echo "$((SECONDS - start)) $((after - before)) $rc" >"$logs/$s.part"
            mv "$logs/$s.part" "$logs/$s.done"
        done
        local total
        times_sum total all
        echo "$total" >"$logs/queue.cpu"
    ) &
    queue_pid=$!
}
# await_build STAGE: waits for the queue to finish STAGE's build; fails if it failed or the
# queue died before it.
await_build() {
    while [[ ! -f $logs/$1.done ]]; do
        kill -0 "$queue_pid" 2>/dev/null || { echo "the build queue ended before stage $1's build" >&2; return 1; }
        sleep 1
    done
    read -r build_took build_cpu build_rc <"$logs/$1.done"
    return "$build_rc"
}
for i in "${!order[@]}"; do
    s=${order[$i]}
    header "stage $s"
    start=$SECONDS rc=0 ctest_counted=0 build_took=0 build_cpu=0
    if ((i == 0)); then
        read_cpu && before=$cpu
        "build_$s" || rc=$?
        read_cpu
        build_took=$((SECONDS - start)) build_cpu=$((cpu - before))
        ((${#order[@]} > 1)) && start_queue "${order[@]:1}"
        where=''
    else
        await_build "$s" || rc=$?
        cat "$logs/$s.log" 2>/dev/null || true
        where=', in the background during earlier tests'
    fi
    printf '\n==== stage %s: build %s in %d s, %d s CPU%s\n' "$s" "$( ((rc == 0)) && echo done || echo FAILED)" \
        "$build_took" "$build_cpu" "$where"
    test_start=$SECONDS
    read_cpu && before=$cpu
    ((rc == 0)) && { "test_$s" || rc=$?; }
    read_cpu
    test_took=$((SECONDS - test_start)) test_cpu=$((cpu - before))
    ((rc == 0)) || ((ctest_counted)) || total_failed=$((total_failed + 1)) # a failed build: one failure
    outcome=$( ((rc == 0)) && echo passed || echo FAILED)
    summary+=("$(printf '%-7s %-6s  build %4d s (%4d s CPU), tests %4d s (%4d s CPU)' "$s" "$outcome" \
        "$build_took" "$build_cpu" "$test_took" "$test_cpu")")
    printf '\n==== stage %s: %s; build %d s (%d s CPU), tests %d s (%d s CPU)\n' "$s" "$outcome" \
        "$build_took" "$build_cpu" "$test_took" "$test_cpu"
done

header "summary"
for line in "${summary[@]}"; do
    echo "  $line"
done
if ((${#failed_tests[@]})); then
    echo "failed tests:"
    printf '  %s\n' "${failed_tests[@]}"
fi
echo "$total_passed passed, $total_failed failed, $total_skipped skipped"
((total_failed == 0)) && [[ ! " ${summary[*]} " =~ FAILED ]]
