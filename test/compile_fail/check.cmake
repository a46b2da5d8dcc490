# Compiles SOURCE (which must not compile) and passes when the compiler's output holds EXPECT:
# the sentence of a static_assert, so that a user's mistake is explained, not buried.
execute_process(
    COMMAND ${COMPILER} -std=c++20 -fsyntax-only -I${INCLUDE_DIR} ${SOURCE}
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE out
    ERROR_VARIABLE out)
if(rc EQUAL 0)
    message(FATAL_ERROR "${SOURCE} compiled; it must not")
endif()
string(FIND "${out}" "${EXPECT}" at)
if(at EQUAL -1)
    message(FATAL_ERROR "the compiler's output for ${SOURCE} does not say \"${EXPECT}\":\n${out}")
endif()
string(REGEX MATCHALL "error:" errors "${out}")
list(LENGTH errors n)
message(STATUS "${SOURCE}: rejected with the expected sentence (${n} error lines)")
