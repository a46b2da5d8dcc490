#!/usr/bin/env bash
# Applies the project's format (.clang-format, clang-format 14) to the C++ sources that the
# CTest `format:` checks: src/, include/, tools/, bench/ and test/. examples/ is left as
# written (docs/ quotes it verbatim).
set -euo pipefail
cd "$(dirname "$0")/.."
cf=$(command -v clang-format-14 || command -v clang-format)
git ls-files -z 'src/*.[ch]pp' 'include/*.[ch]pp' 'tools/*.[ch]pp' 'bench/*.[ch]pp' 'test/*.[ch]pp' |
    xargs -0 "$cf" --style=file -i
