# Writes the C++ block marked `<!-- snippet: program NAME -->` in MARKDOWN to OUTPUT, as it is,
# after a #line directive (the compiler then names the Markdown file and line). A build step of
# test/docs/CMakeLists.txt:
#
#   cmake -DMARKDOWN=README.md -DNAME=readme-example -DOUTPUT=readme-example.cpp -P program.cmake
#
# OUTPUT is rewritten only when it changes, so that an edit elsewhere in the file rebuilds nothing.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/markdown.cmake)

redlock_docs_blocks("${MARKDOWN}" md)
set(found 0)
if(md_blocks GREATER 0)
    foreach(b RANGE 1 ${md_blocks})
        if(md_${b}_marker MATCHES "^program +${NAME}$")
            math(EXPR found "${found} + 1")
            math(EXPR line "${md_${b}_fence} + 1")
            set(text "#line ${line} \"${MARKDOWN}\"\n")
            foreach(k RANGE 1 ${md_${b}_n})
                set(l "${md_${b}_${k}}")
                redlock_docs_decode(l)
                string(APPEND text "${l}\n")
            endforeach()
        endif()
    endforeach()
endif()
if(NOT found EQUAL 1)
    message(FATAL_ERROR "${MARKDOWN}: ${found} C++ blocks are marked `<!-- snippet: program ${NAME} -->`; one must be")
endif()
file(WRITE "${OUTPUT}.new" "${text}")
file(COPY_FILE "${OUTPUT}.new" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.new")
