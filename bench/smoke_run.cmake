# A redlock-bench smoke run on masters it spawns: runs BENCH with ARGS (one string, split as a
# shell would) and --json JSON, and passes when it exits 0 (its counts add up) and the JSON
# reports the masters' CPU: a number per cycle, and one entry for each of the SERVERS server
# processes (a standalone master is one, a cluster master one per node), and that its counts
# add up and locks were acquired (with replica acks, a WAIT that never answered in time would
# leave none). With REPLICAS (how many of those are replicas), also that as many entries say
# "replica" and that the replicas' CPU per cycle is a number. With WAITING (--wait --hold --observe,
# fewer resources than workers), also the hand-off figures and hand-overs.
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(
    COMMAND ${BENCH} ${args} --json ${JSON}
    RESULT_VARIABLE rc
    OUTPUT_VARIABLE out
    ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
    message(FATAL_ERROR "redlock-bench ${ARGS} exited with ${rc}:\n${out}")
endif()
file(READ ${JSON} json)
# The counts the exit status judged (totals::add_up), recomputed from the JSON: attempts =
# acquired + failed, acquired = released + release failed, one acquire and one release sample
# per cycle; and the run was not interrupted.
function(sum_of_members key out)
    string(JSON n LENGTH "${json}" ${key})
    set(sum 0)
    math(EXPR last "${n} - 1")
    foreach(i RANGE ${last})
        string(JSON member MEMBER "${json}" ${key} ${i})
        string(JSON v GET "${json}" ${key} ${member})
        math(EXPR sum "${sum} + ${v}")
    endforeach()
    set(${out} ${sum} PARENT_SCOPE)
endfunction()
foreach(key attempts acquired released counts_add_up interrupted)
    string(JSON ${key} GET "${json}" ${key})
endforeach()
string(JSON acquire_samples GET "${json}" acquire_us count)
string(JSON release_samples GET "${json}" release_us count)
sum_of_members(failed failed)
sum_of_members(release_failed release_failed)
math(EXPR tried "${acquired} + ${failed}")
math(EXPR ended "${released} + ${release_failed}")
if(NOT counts_add_up OR interrupted OR NOT attempts EQUAL tried OR NOT acquired EQUAL ended
   OR NOT acquire_samples EQUAL acquired OR NOT release_samples EQUAL acquired)
    message(FATAL_ERROR "the counts do not add up in ${JSON} (counts_add_up ${counts_add_up}, interrupted "
                        "${interrupted}): attempts ${attempts} = acquired ${acquired} + failed ${failed}? acquired = "
                        "released ${released} + release failed ${release_failed}? samples: acquire "
                        "${acquire_samples}, release ${release_samples}\n${out}")
endif()
if(acquired EQUAL 0)
    message(FATAL_ERROR "no lock was acquired:\n${out}")
endif()
# Fails unless the JSON's member `key` is a number.
function(require_number key)
    string(JSON key_type TYPE "${json}" ${key})
    if(NOT key_type STREQUAL "NUMBER")
        message(FATAL_ERROR "${key} is ${key_type}, not a number, in ${JSON}:\n${out}")
    endif()
endfunction()
require_number(masters_cpu_us_per_cycle)
string(JSON processes LENGTH "${json}" masters_cpu_per_process)
if(NOT processes EQUAL SERVERS)
    message(FATAL_ERROR "masters_cpu_per_process lists ${processes} processes, not ${SERVERS}, in ${JSON}")
endif()
if(DEFINED REPLICAS)
    set(replica_entries 0)
    math(EXPR last "${processes} - 1")
    foreach(i RANGE ${last})
        string(JSON role GET "${json}" masters_cpu_per_process ${i} role)
        if(role STREQUAL "replica")
            math(EXPR replica_entries "${replica_entries} + 1")
        endif()
    endforeach()
    if(NOT replica_entries EQUAL REPLICAS)
        message(FATAL_ERROR "masters_cpu_per_process lists ${replica_entries} replicas, not ${REPLICAS}, in ${JSON}")
    endif()
    require_number(replicas_cpu_us_per_cycle)
endif()
if(WAITING)
    # --wait with fewer resources than workers and a hold: hand-off times, the ceiling R / hold
    # and R / mean held, and (--observe) the acquisitions handed over, which a row of waiters of
    # one process makes.
    foreach(key handoff_us held_us ceiling)
        string(JSON type ERROR_VARIABLE missing TYPE "${json}" ${key})
        if(NOT type STREQUAL "OBJECT")
            message(FATAL_ERROR "${key} is missing from ${JSON}:\n${out}")
        endif()
    endforeach()
    if(NOT out MATCHES "acquired by hand-over [1-9]")
        message(FATAL_ERROR "no acquisition was handed over:\n${out}")
    endif()
endif()
string(JSON per_cycle GET "${json}" masters_cpu_us_per_cycle)
message(STATUS "redlock-bench ${ARGS}: counts add up; masters' CPU ${per_cycle} us per cycle over ${SERVERS} "
               "server processes\n${out}")
