#!/usr/bin/env bash
# The test command: installs what is missing, builds, and runs the whole suite (unit, live
# against real redis-server masters the tests start themselves, and the install check).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREDLOCK_WARNINGS_AS_ERRORS=ON
cmake --build "$build" -j2
ctest --test-dir "$build" --output-on-failure --timeout 600 "$@"
