# The consumer check, run by CTest with -P. One build of the library serves three checks:
#
#  1. add_subdirectory: test/consumer_subdirectory builds redlock from source inside its own
#     project (not top level: no tools, tests, benches or examples), links redlock::redlock
#     and runs. Debug: the point is that it configures, builds and links, and -O0 halves the
#     library's compile time.
#  2. find_package: that build's install (redlock's install rules run in the parent project)
#     goes into a scratch prefix; test/consumer finds it with find_package(redlock CONFIG),
#     builds and runs.
#  3. A library-only install of a top-level build: a user who runs
#     `cmake --build B --target redlock` then `cmake --install B` in a fresh build directory
#     with the default options (tools included) must not need the tools built. The top-level
#     project is configured, and given the library that step 1 built where its own build
#     would put it, instead of compiling it a second time; then its install must succeed.
#     What this checks is the install rules (the tools' are OPTIONAL), not the compiler.
file(REMOVE_RECURSE "${WORK_DIR}")
include(${CMAKE_CURRENT_LIST_DIR}/run.cmake)

function(require_installed prefix)
    if(NOT EXISTS "${prefix}/include/redlock/redlock.hpp")
        message(FATAL_ERROR "not installed in ${prefix}: include/redlock/redlock.hpp")
    endif()
    file(GLOB_RECURSE package_config "${prefix}/*/redlock-config.cmake")
    file(GLOB_RECURSE library "${prefix}/*/libredlock*")
    if(NOT package_config OR NOT library)
        message(FATAL_ERROR "the install in ${prefix} lacks the package config or the library")
    endif()
endfunction()

# UNITY_BUILD: as the build that runs the check (the test command's builds are unity builds;
# the library's sources compiled one by one are a developer's build, the default).
# Debug without -g: nothing reads the debug information, which costs a fifth of the library's
# compile time (22 s of CPU against 18 s).
set(compiler -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O0" -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
if(UNITY_BUILD)
    list(APPEND compiler -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=0)
endif()

# 1. add_subdirectory
set(sub "${WORK_DIR}/subdirectory")
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/test/consumer_subdirectory" -B "${sub}" ${compiler}
    -DREDLOCK_SOURCE_DIR=${SOURCE_DIR})
run(${CMAKE_COMMAND} --build "${sub}" -j2)
run("${sub}/redlock_consumer")

# 2. find_package
set(prefix "${WORK_DIR}/prefix")
run(${CMAKE_COMMAND} --install "${sub}" --prefix "${prefix}" --config Debug)
require_installed("${prefix}")
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/test/consumer" -B "${WORK_DIR}/find_package" ${compiler}
    -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build "${WORK_DIR}/find_package" -j2)
run("${WORK_DIR}/find_package/redlock_consumer")

# 3. a library-only install of a top-level build
set(top "${WORK_DIR}/top-level")
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${top}" ${compiler})
file(GLOB built "${sub}/redlock/libredlock.*")
if(NOT built)
    message(FATAL_ERROR "step 1 left no library in ${sub}/redlock")
endif()
file(COPY ${built} DESTINATION "${top}")
run(${CMAKE_COMMAND} --install "${top}" --prefix "${WORK_DIR}/top-level-prefix" --config Debug)
require_installed("${WORK_DIR}/top-level-prefix")
