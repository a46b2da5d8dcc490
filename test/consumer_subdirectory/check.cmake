# Run by CTest with -P: configures, builds and runs test/consumer_subdirectory.
file(REMOVE_RECURSE "${WORK_DIR}")
function(run)
    execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
        message(FATAL_ERROR "failed (${rc}): ${ARGV}")
    endif()
endfunction()
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/test/consumer_subdirectory" -B "${WORK_DIR}" -DCMAKE_BUILD_TYPE=Debug
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DREDLOCK_SOURCE_DIR=${SOURCE_DIR})
run(${CMAKE_COMMAND} --build "${WORK_DIR}" -j2)
run("${WORK_DIR}/redlock_consumer")
