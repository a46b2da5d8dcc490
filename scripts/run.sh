#!/usr/bin/env bash
# The main job: installs what is missing, builds, then runs the demonstration on the embedded
# default: 5 local redis-server masters that the program starts on loopback and stops itself.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j2 --target redlock-demo
"$build/examples/redlock-demo" "$@"
