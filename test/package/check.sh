#!/usr/bin/env bash
# The Debian package, as a user gets it: cpack -G DEB over the build tree (built already), then
# the package's contents and dependencies, then `dpkg -i` on this machine, a consumer built
# against the installed package with find_package and with pkg-config, the examples compiled
# against it alone (one built and run), the installed tools run, and `dpkg -r`, also on failure.
# Installing needs root: otherwise the test reports itself skipped (exit 77), it does not pass;
# under CI=true it fails instead.
#
#   test/package/check.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
source_dir=$1 build_dir=$2 work=$3

rm -rf "$work"
mkdir -p "$work"
(cd "$build_dir" && cpack -G DEB -B "$work/deb" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/deb/redlock_*.deb)
echo "package: $deb ($(du -h "$deb" | cut -f1))"

fail() { echo "FAIL: $*"; exit 1; }

# Contents: the library, headers, both package files, the tools.
contents=$(dpkg-deb -c "$deb")
for f in usr/lib/libredlock.a usr/include/redlock/redlock.hpp usr/lib/cmake/redlock/redlock-config.cmake \
         usr/lib/pkgconfig/redlock.pc usr/bin/redlock-run usr/bin/redlock-status usr/bin/redlock-bench; do
    grep -q " \./$f\$" <<<"$contents" || fail "$f is not in the package"
done
# Dependencies: what the tools link (found by dpkg-shlibdeps) and what a consumer compiles with.
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for d in libssl3 libboost-url1.81.0 libboost1.81-dev libboost-url1.81-dev libssl-dev; do
    grep -qE "(^|, )$d( |,|$)" <<<"$depends" || fail "Depends lacks $d"
done

if [ "$(id -u)" -ne 0 ]; then
    # CI runs as root (the README's test command installs what it needs): there, a skip would
    # hide the check, so it fails.
    [ "${CI:-}" = true ] && fail "CI=true but not root: the package cannot be installed and checked"
    echo "SKIPPED: installing the package needs root"
    exit 77
fi
if dpkg-query -W -f='${Status}' redlock 2>/dev/null | grep -q "install ok installed"; then
    fail "a redlock package is installed already; this test installs and removes its own"
fi
trap 'dpkg -r redlock >/dev/null 2>&1 || true' EXIT
dpkg -i "$deb" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i"; }

# A consumer through find_package, with nothing but the package on the default prefix.
cmake -S "$source_dir/test/consumer" -B "$work/consumer" -DCMAKE_BUILD_TYPE=Release >"$work/consumer.log" 2>&1 &&
    cmake --build "$work/consumer" -j2 >>"$work/consumer.log" 2>&1 || { cat "$work/consumer.log"; fail "find_package consumer"; }
"$work/consumer/redlock_consumer"

# The same program through pkg-config.
# shellcheck disable=SC2046
c++ -std=c++20 -O1 "$source_dir/test/consumer/main.cpp" -o "$work/pc_consumer" $(pkg-config --cflags --libs redlock) ||
    fail "pkg-config consumer"
"$work/pc_consumer"

# The examples are user code: they build against the installed package alone. The waiting example
# is built through find_package and runs against masters started for it; the others are compiled
# with pkg-config's flags, -fsyntax-only (what this checks is that the installed headers are all
# they need; the normal build compiles and runs every one of them): 17 s of CPU against 34 s.
cmake -S "$source_dir/examples" -B "$work/examples" >"$work/examples.log" 2>&1 &&
    cmake --build "$work/examples" -j2 --target redlock-example-waiting >>"$work/examples.log" 2>&1 ||
    { cat "$work/examples.log"; fail "the waiting example"; }
"$build_dir/test/redlock-with-masters" --count 3 -- "$work/examples/redlock-example-waiting" >"$work/waiting.log" 2>&1 ||
    { cat "$work/waiting.log"; fail "the waiting example built against the package"; }
others=()
for f in "$source_dir"/examples/*.cpp; do
    [[ $f == */waiting.cpp ]] || others+=("$f")
done
(( ${#others[@]} >= 6 )) || fail "only ${#others[@]} other examples found in $source_dir/examples"
# shellcheck disable=SC2046
printf '%s\0' "${others[@]}" |
    xargs -0 -P2 -n1 c++ -std=c++20 -fsyntax-only -Werror $(pkg-config --cflags redlock) ||
    fail "an example does not compile against the installed package"

# The tools, from PATH.
redlock-run --version
redlock-run --help >/dev/null
redlock-status --version
redlock-status --help >/dev/null
redlock-bench --help >/dev/null
echo "package check: PASS"
