#!/usr/bin/env bash
# Installs what redlock needs to build, test and benchmark, from Debian bookworm's packages,
# when it is missing. Safe to run again: it installs nothing that is already there.
#
#   bash scripts/install-deps.sh          # build, run, test (gcc), benchmark
#   bash scripts/install-deps.sh test     # also clang and its runtimes, for the libFuzzer
#                                         # targets of scripts/test.sh's fuzz stage
set -euo pipefail

packages=(
    g++ cmake make
    libboost1.81-dev   # Asio 1.81 (co_composed, any_completion_handler); 1.74 is too old
    libssl-dev         # TLS and the CSPRNG for lock tokens
    libboost-url1.81-dev  # percent-encoding and RFC 3986 character sets of the master URIs
    catch2             # 2.13, the test framework
    libcli11-dev       # 2.1, header-only: the command-line tools' arguments
    libboost-json1.81-dev  # redlock-bench's JSON output
    redis-server redis-tools  # real masters for the live tests, the examples and the bench
    openssl            # only for inspecting the test certificates by hand
)
if [ "${1:-}" = test ]; then
    packages+=(
        clang              # 14: the fuzz stage's compiler (libFuzzer is clang's)
        clang-format       # 14: the format check (.clang-format, the CTest format:)
        libclang-rt-14-dev # libFuzzer and clang's ASan/UBSan runtimes
        ninja-build        # the test command's builds (scripts/test.sh)
        spin               # the model checker of docs/model/ (the model stage)
        doxygen            # the API reference, checked for undocumented symbols
        dpkg-dev pkg-config  # the .deb package check (dpkg-shlibdeps) and its pkg-config consumer
    )
    # node and npm for the interop test with node-redlock (test/interop/), which installs its
    # packages from the npm registry. Looked up as commands: a node installed otherwise (e.g.
    # NodeSource's, which brings its own npm) is kept, and Debian's npm is not put beside it.
    command -v node >/dev/null || packages+=(nodejs)
    command -v npm >/dev/null || packages+=(npm)
fi

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
    echo "install-deps: installing ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The redis-server package may enable a system service; redlock never uses it (every test and
# tool starts its own masters on free loopback ports).
