#!/usr/bin/env bash
# The main job: installs what is missing, builds, then runs redlock-bench on the embedded
# default: 5 local redis-server masters that the program starts on loopback and stops itself,
# 128 workers locking and releasing 128 resources for 10 s after 1 s of warm-up. It prints a
# progress line every second and a summary at the end. Extra arguments go to redlock-bench
# (see `redlock-bench --help`), e.g. `bash scripts/run.sh --workers 1 --duration 5`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j2 --target redlock-bench
"$build/bench/redlock-bench" --spawn 5 --duration 10 "$@"
