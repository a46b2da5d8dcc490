# Run by CTest with -P: configures, builds and runs test/consumer_subdirectory.
include(${CMAKE_CURRENT_LIST_DIR}/../consumer/run.cmake)
file(REMOVE_RECURSE "${WORK_DIR}")
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/test/consumer_subdirectory" -B "${WORK_DIR}" -DCMAKE_BUILD_TYPE=Debug
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DREDLOCK_SOURCE_DIR=${SOURCE_DIR})
run(${CMAKE_COMMAND} --build "${WORK_DIR}" -j2)
run("${WORK_DIR}/redlock_consumer")
