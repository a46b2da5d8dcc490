# A redlock-bench smoke run on masters it spawns: runs BENCH with ARGS (one string, split as a
# shell would) and --json JSON, and passes when it exits 0 (its counts add up) and the JSON
# reports the masters' CPU: a number per cycle, and one entry for each of the SERVERS server
# processes (a standalone master is one, a cluster master one per node). With REPLICAS (how
# many of those are replicas), also that as many entries say "replica", that the replicas' CPU
# per cycle is a number, and that locks were acquired. With WAITING (--wait --hold --observe,
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
string(JSON per_cycle_type TYPE "${json}" masters_cpu_us_per_cycle)
if(NOT per_cycle_type STREQUAL "NUMBER")
    message(FATAL_ERROR "masters_cpu_us_per_cycle is ${per_cycle_type}, not a number, in ${JSON}:\n${out}")
endif()
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
    string(JSON replicas_type TYPE "${json}" replicas_cpu_us_per_cycle)
    if(NOT replicas_type STREQUAL "NUMBER")
        message(FATAL_ERROR "replicas_cpu_us_per_cycle is ${replicas_type}, not a number, in ${JSON}:\n${out}")
    endif()
    string(JSON acquired GET "${json}" acquired)
    if(acquired EQUAL 0)
        message(FATAL_ERROR "no lock was acquired (did every WAIT time out?):\n${out}")
    endif()
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
