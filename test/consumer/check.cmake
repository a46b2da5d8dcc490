# The install check, run by CTest with -P. It starts from a library-only build, as a user who
# runs `cmake --build B --target redlock` then `cmake --install B` would: a fresh build
# directory of the project with its default options (tools and tests included), of which only
# the library is built. Its install must not need the tools. Then a consumer project finds
# the installed package with find_package(redlock CONFIG), builds and runs.
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
if(NOT CONFIG)
    set(CONFIG RelWithDebInfo)
endif()

include(${CMAKE_CURRENT_LIST_DIR}/run.cmake)

run(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/library-build" -DCMAKE_BUILD_TYPE=${CONFIG}
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
run(${CMAKE_COMMAND} --build "${WORK_DIR}/library-build" --target redlock -j2)
run(${CMAKE_COMMAND} --install "${WORK_DIR}/library-build" --prefix "${prefix}" --config ${CONFIG})
foreach(installed IN ITEMS include/redlock/redlock.hpp)
    if(NOT EXISTS "${prefix}/${installed}")
        message(FATAL_ERROR "not installed: ${installed}")
    endif()
endforeach()
file(GLOB_RECURSE package_config "${prefix}/*/redlock-config.cmake")
file(GLOB_RECURSE library "${prefix}/*/libredlock*")
if(NOT package_config OR NOT library)
    message(FATAL_ERROR "the install lacks the package config or the library")
endif()

run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/test/consumer" -B "${WORK_DIR}/build"
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=${CONFIG} -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build" -j2)
run("${WORK_DIR}/build/redlock_consumer")
