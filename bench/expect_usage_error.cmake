# Runs BENCH with ARGS (one string, split as a shell would) and passes when it refuses them as
# a bad argument: exit status 2 and EXPECT in what it printed on stderr.
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(
    COMMAND ${BENCH} ${args}
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE out
    ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
    message(FATAL_ERROR "redlock-bench ${ARGS} exited with ${rc}, not 2:\n${out}${err}")
endif()
string(FIND "${err}" "${EXPECT}" at)
if(at EQUAL -1)
    message(FATAL_ERROR "redlock-bench ${ARGS} does not say \"${EXPECT}\":\n${err}")
endif()
message(STATUS "redlock-bench ${ARGS}: refused (${err})")
