# The fenced code blocks of a Markdown file, for check.cmake and program.cmake (included by both).
#
# Lines are kept in numbered variables, not CMake lists: a line of C++ holds `;` (a list
# separator) and `[` `]` (which group list items), so they are read encoded, each of those three
# characters replaced by a control character, and redlock_docs_decode() gives the text back.

string(ASCII 1 redlock_docs_semicolon)
string(ASCII 2 redlock_docs_open)
string(ASCII 3 redlock_docs_close)

# redlock_docs_decode(VAR): VAR's encoded text as written.
macro(redlock_docs_decode var)
    string(REPLACE "${redlock_docs_semicolon}" ";" ${var} "${${var}}")
    string(REPLACE "${redlock_docs_open}" "[" ${var} "${${var}}")
    string(REPLACE "${redlock_docs_close}" "]" ${var} "${${var}}")
endmacro()

# redlock_docs_read_lines(FILE PREFIX): FILE's lines, encoded, as PREFIX_1 ... PREFIX_<n>, and
# their number as PREFIX_n, in the caller's scope.
function(redlock_docs_read_lines file prefix)
    file(READ "${file}" text)
    string(REPLACE ";" "${redlock_docs_semicolon}" text "${text}")
    string(REPLACE "[" "${redlock_docs_open}" text "${text}")
    string(REPLACE "]" "${redlock_docs_close}" text "${text}")
    string(REGEX REPLACE "\n$" "" text "${text}")
    string(REPLACE "\n" ";" lines "${text}")
    set(n 0)
    foreach(line IN LISTS lines)  # IN LISTS keeps the empty lines
        math(EXPR n "${n} + 1")
        set(${prefix}_${n} "${line}" PARENT_SCOPE)
    endforeach()
    set(${prefix}_n ${n} PARENT_SCOPE)
endfunction()

# redlock_docs_blocks(FILE PREFIX): reads FILE (redlock_docs_read_lines, as PREFIX_line_*) and
# its C++ code blocks (```cpp, ```c++, ```cxx) into, for each block b = 1 ... PREFIX_blocks:
#   PREFIX_<b>_fence    the line number of its opening fence
#   PREFIX_<b>_n        its number of lines; PREFIX_<b>_<k> its k-th line (k from 1), encoded,
#                       without the fence's own indentation (a block in a list item)
#   PREFIX_<b>_marker   the `KIND NAME` of a `<!-- snippet: KIND NAME -->` comment on the line
#                       just before the fence, or empty
#   PREFIX_<b>_prose    the line number where the prose before it starts: after the previous
#                       code block or heading
# and PREFIX_errors: the lines of FILE that break the rules of the markers (a marker that is
# not followed by a C++ block).
function(redlock_docs_blocks file prefix)
    redlock_docs_read_lines("${file}" line)
    set(out ${prefix}_blocks ${prefix}_errors ${prefix}_line_n)
    set(${prefix}_line_n ${line_n})
    set(${prefix}_errors "")
    set(blocks 0)
    set(in_block "")          # inside a block: "cpp" (one of ours) or "other"
    set(boundary 0)           # the last code block's closing fence or heading
    set(marker_at 0)
    set(previous 0)
    foreach(i RANGE 1 ${line_n})
        set(l "${line_${i}}")
        set(${prefix}_line_${i} "${l}")
        list(APPEND out ${prefix}_line_${i})
        if(in_block STREQUAL "")
            if(l MATCHES "^( *)(```+)[ \t]*([^ \t`]*)")
                string(LENGTH "${CMAKE_MATCH_1}" indent)
                string(TOLOWER "${CMAKE_MATCH_3}" lang)
                if(lang MATCHES "^(cpp|c\\+\\+|cxx)$")
                    set(in_block cpp)
                    math(EXPR blocks "${blocks} + 1")
                    set(b ${prefix}_${blocks})
                    set(${b}_fence ${i})
                    set(${b}_n 0)
                    set(${b}_marker "")
                    if(marker_at EQUAL previous AND NOT marker_at EQUAL 0)
                        set(${b}_marker "${marker}")
                    endif()
                    math(EXPR ${b}_prose "${boundary} + 1")
                    list(APPEND out ${b}_fence ${b}_n ${b}_marker ${b}_prose)
                else()
                    set(in_block other)
                endif()
            elseif(l MATCHES "^ *#")
                set(boundary ${i})
            endif()
            if(NOT marker_at EQUAL 0 AND marker_at EQUAL previous AND NOT in_block STREQUAL "cpp")
                list(APPEND ${prefix}_errors ${previous})
            endif()
            if(l MATCHES "^ *<!-- snippet:(.*)-->[ \t]*$")
                string(STRIP "${CMAKE_MATCH_1}" marker)
                set(marker_at ${i})
            elseif(l MATCHES "^ *<!-- snippet")
                list(APPEND ${prefix}_errors ${i})  # not the form above
            endif()
        elseif(l MATCHES "^ *```+[ \t]*$")
            set(in_block "")
            set(boundary ${i})
        elseif(in_block STREQUAL "cpp")
            # Remove the fence's indentation, as Markdown does.
            string(REGEX MATCH "^ +" spaces "${l}")
            string(LENGTH "${spaces}" lead)
            if(lead GREATER indent)
                set(lead ${indent})
            endif()
            string(SUBSTRING "${l}" ${lead} -1 l)
            math(EXPR ${b}_n "${${b}_n} + 1")
            set(${b}_${${b}_n} "${l}")
            list(APPEND out ${b}_${${b}_n})
        endif()
        set(previous ${i})
    endforeach()
    set(${prefix}_blocks ${blocks})
    foreach(v IN LISTS out)
        set(${v} "${${v}}" PARENT_SCOPE)
    endforeach()
endfunction()
