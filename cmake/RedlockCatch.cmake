# The project's Catch2 test programs: the unit, live and tool tests (test/CMakeLists.txt) and the
# bench tests (bench/CMakeLists.txt).
find_package(Catch2 2.13 REQUIRED)
include(Catch)

# redlock_catch_program(<target> PREFIX <prefix> SOURCES <file>... LIBRARIES <lib>...
#                       [RUNS <program> AS <macro>] [PROPERTIES <name> <value>...])
# A test program built from SOURCES at the test programs' optimisation, linked with LIBRARIES,
# Catch2's main (redlock_catch_main, test/CMakeLists.txt) and the warnings, whose test cases are
# CTest tests named PREFIX<name>, with PROPERTIES. RUNS: the tests run <program>, a target built
# before them, whose path they read from the macro <macro>. --warn NoTests: a test whose name the
# discovery mangles (a ";" splits it into two CMake list items) would otherwise run nothing and
# pass.
function(redlock_catch_program target)
    cmake_parse_arguments(PARSE_ARGV 1 arg "" "PREFIX;RUNS;AS" "SOURCES;LIBRARIES;PROPERTIES")
    add_executable(${target} ${arg_SOURCES})
    redlock_test_optimization(${target})
    target_link_libraries(${target} PRIVATE ${arg_LIBRARIES} redlock_catch_main redlock_warnings)
    if(arg_RUNS)
        target_compile_definitions(${target} PRIVATE ${arg_AS}="$<TARGET_FILE:${arg_RUNS}>")
        add_dependencies(${target} ${arg_RUNS})
    endif()
    catch_discover_tests(${target} TEST_PREFIX "${arg_PREFIX}" EXTRA_ARGS --warn NoTests
                         PROPERTIES ${arg_PROPERTIES})
endfunction()
