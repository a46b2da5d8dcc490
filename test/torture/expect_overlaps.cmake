# `--unsafe-restarts` breaks Redlock's assumption on purpose (majorities restarted at once without
# persistence, the clients' restart quarantine off): real overlaps follow, and the checker must
# report them. Not every run has one (3 of 4 runs of 12 s did, 2026-11-27), so this runs up to
# RUNS of them; it fails if a run ends in another way than PASS or FAIL, or reports overlaps
# and passes.
#
# A permit held beyond a semaphore's number counts as an overlap. ARGS: more arguments of each
# run (a CMake list). Without EACH_KIND it passes at the first run that reports an overlap. With
# EACH_KIND (runs with --kinds) it adds up the checker's overlaps by kind over the runs and
# passes once every kind of lock has had one (a pair of two kinds counts for both, a permit too
# many for the permits), so that the checker is shown to see a broken exclusion of each kind.
#
#   cmake -DTORTURE=path/to/redlock-torture -DRUNS=6 -DDURATION=12 [-DARGS=...] [-DEACH_KIND=ON]
#         -P expect_overlaps.cmake
set(kinds "mutex;multi-resource;fenced;permit;reader;writer;fenced writer")
foreach(k IN LISTS kinds)
    string(MAKE_C_IDENTIFIER "${k}" id)
    set(total_${id} 0)
endforeach()
foreach(run RANGE 1 ${RUNS})
    execute_process(
        COMMAND ${TORTURE} --duration ${DURATION} --unsafe-restarts --overrun-pct 30 ${ARGS}
        RESULT_VARIABLE rc
        OUTPUT_VARIABLE out
        ERROR_VARIABLE err)
    string(REGEX MATCH "checker: overlaps ([0-9]+)" found "${out}")
    set(overlaps "${CMAKE_MATCH_1}")
    if(out MATCHES "permits beyond a semaphore's number ([0-9]+)")
        math(EXPR overlaps "${overlaps} + ${CMAKE_MATCH_1}")
    endif()
    message(STATUS "run ${run}: exit ${rc}, overlaps ${overlaps}")
    if(NOT rc EQUAL 0 AND NOT rc EQUAL 1)
        message(FATAL_ERROR "run ${run} ended with exit ${rc}:\n${out}\n${err}")
    endif()
    if(NOT found)
        message(FATAL_ERROR "run ${run} printed no checker line:\n${out}\n${err}")
    endif()
    if(overlaps GREATER 0 AND NOT rc EQUAL 1)
        message(FATAL_ERROR "run ${run} found ${overlaps} overlaps but passed (exit ${rc})")
    endif()
    if(NOT EACH_KIND)
        if(overlaps GREATER 0)
            message(STATUS "the checker reported ${overlaps} real overlaps in run ${run}, and the run failed")
            return()
        endif()
        continue()
    endif()
    string(REGEX MATCH "kinds: overlaps [^\n]*" line "${out}")
    if(NOT line)
        message(FATAL_ERROR "run ${run} printed no overlaps by kind (EACH_KIND needs --kinds):\n${out}")
    endif()
    set(missing "")
    set(totals "")
    foreach(k IN LISTS kinds)
        string(MAKE_C_IDENTIFIER "${k}" id)
        if(NOT line MATCHES "[),] ${k} ([0-9]+)")
            message(FATAL_ERROR "run ${run}: no count for ${k} in: ${line}")
        endif()
        math(EXPR total_${id} "${total_${id}} + ${CMAKE_MATCH_1}")
        string(APPEND totals " ${k} ${total_${id}};")
        if(total_${id} EQUAL 0)
            list(APPEND missing "${k}")
        endif()
    endforeach()
    message(STATUS "  overlaps by kind so far:${totals}")
    if(NOT missing)
        message(STATUS "every kind had real overlaps within ${run} runs, each reported and failing its run")
        return()
    endif()
endforeach()
if(EACH_KIND)
    message(FATAL_ERROR "in ${RUNS} runs with --unsafe-restarts, no overlap of: ${missing}")
endif()
message(FATAL_ERROR "no overlap in ${RUNS} runs with --unsafe-restarts: the checker saw none")
