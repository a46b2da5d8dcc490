# Builds a program of the documentation (the target TARGET, whose source program.cmake takes from
# the Markdown as it is) in the build tree BUILD_DIR, then runs it against COUNT local masters
# started by redlock-with-masters (LAUNCHER), their URIs as its arguments. Fails if it does not
# build, or does not exit with 0. The test "docs: snippet NAME builds and runs against 3 masters":
#
#   cmake -DBUILD_DIR=build -DCONFIG=... -DTARGET=redlock-docs-readme-example -DPROGRAM=<its file>
#         -DLAUNCHER=<redlock-with-masters> -DCOUNT=3 -P run_program.cmake
cmake_minimum_required(VERSION 3.25)

set(config "")
if(CONFIG)
    set(config --config ${CONFIG})
endif()
execute_process(
    COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET} ${config}
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE out
    ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
    message(NOTICE "${out}")
    message(FATAL_ERROR "${TARGET} does not build (the compiler's output above names the Markdown lines)")
endif()
message(NOTICE "${TARGET}: built")

execute_process(
    COMMAND ${LAUNCHER} --count ${COUNT} --uris-as-arguments -- ${PROGRAM}
    RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${TARGET} against ${COUNT} masters (their URIs as its arguments): exit status ${rc}, not 0")
endif()
message(NOTICE "${TARGET}: ran against ${COUNT} masters, their URIs as its arguments, and exited with 0")
