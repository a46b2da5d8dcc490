# The one format (.clang-format at the root): fails naming each file under src/, include/,
# tools/, bench/ and test/ that clang-format would change. examples/ is left as written:
# docs/ quotes it verbatim, and test/docs/ checks the quotes.
#
#   cmake -DROOT=path/to/checkout [-DCLANG_FORMAT=clang-format-14] -P check.cmake
#
# Without clang-format it skips (CTest reads the message below as a skip), except under CI=true, where it fails: the test
# command installs it (scripts/install-deps.sh test). Apply the format with scripts/format.sh.

if(NOT CLANG_FORMAT)
    find_program(CLANG_FORMAT NAMES clang-format-14 clang-format)
endif()
if(NOT CLANG_FORMAT)
    if("$ENV{CI}" STREQUAL "true")
        message(FATAL_ERROR "clang-format not found (CI=true: the format check must run)")
    endif()
    message("clang-format not found: the format check is skipped")
    return()
endif()

set(files "")
foreach(dir src include tools bench test)
    file(GLOB_RECURSE found ${ROOT}/${dir}/*.cpp ${ROOT}/${dir}/*.hpp)
    list(APPEND files ${found})
endforeach()
list(FILTER files EXCLUDE REGEX "/test/fuzz/corpus/|/test/fuzz/regressions/")
list(SORT files)
list(LENGTH files count)

execute_process(COMMAND ${CLANG_FORMAT} --style=file --dry-run --Werror ${files}
    WORKING_DIRECTORY ${ROOT} RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
# Each difference is reported as "<file>:<line>:<column>: error: code should be clang-formatted".
string(REGEX MATCHALL "[^\n]+:[0-9]+:[0-9]+: error: code should be clang-formatted" hits "${err}")
set(differ "")
foreach(h IN LISTS hits)
    string(REGEX REPLACE ":[0-9]+:[0-9]+: error: .*" "" f "${h}")
    file(RELATIVE_PATH rel ${ROOT} ${f})
    list(APPEND differ ${rel})
endforeach()
list(REMOVE_DUPLICATES differ)
if(NOT rc EQUAL 0 AND NOT differ)
    message(FATAL_ERROR "clang-format failed (${rc}):\n${err}")
endif()
if(differ)
    list(JOIN differ "\n  " lines)
    message(FATAL_ERROR "not in the project's format (run scripts/format.sh):\n  ${lines}")
endif()
message("${count} files in the project's format")
