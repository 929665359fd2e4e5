# Run after a doctest executable is built (cmake -P, from scalecast_discover_doctests): one ctest
# entry per test case, labelled with the test case's doctest test suite.
#
# Why not doctest's own doctest_discover_tests(... ADD_LABELS 1) (Debian 12, doctest 2.4.9): it
# asks for each test case's suite with an unescaped `--test-case=NAME`, and doctest splits a
# filter at commas, so every test case with a comma in its name got no label (75 of them on
# 6 Dec 2026: a 2-minute `slow` test ran in the quick lane, and a `gpu` test would have run in CI);
# and it splits the listing into a CMake list, so a name with a semicolon became two ctest entries
# that each ran no test case and passed (two test cases never ran). Here the labels come from one
# listing per suite, names are escaped for doctest's filter, and a name this cannot represent, a
# test case outside every suite and a name used twice stop the build.
#
# Input variables: EXE, PREFIX, WORKDIR, PROPERTIES (extra test properties, a CMake list),
# CTEST_FILE (the script written).

cmake_policy(SET CMP0057 NEW)  # if(... IN_LIST ...)

function(doctest_lines out)  # doctest output lines without its banner and rules
  execute_process(COMMAND "${EXE}" ${ARGN} OUTPUT_VARIABLE text RESULT_VARIABLE rc
                  WORKING_DIRECTORY "${WORKDIR}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${EXE} ${ARGN} failed (${rc}):\n${text}")
  endif()
  if(text MATCHES ";")
    string(REGEX MATCH "[^\n]*;[^\n]*" bad "${text}")
    message(FATAL_ERROR "${EXE}: test case or suite name with a semicolon: \"${bad}\"\n"
                        "ctest cannot carry it (CMake lists split at ';'); rename it.")
  endif()
  string(REPLACE "\n" ";" lines "${text}")
  set(kept "")
  foreach(line IN LISTS lines)
    if(line STREQUAL "" OR line MATCHES "^\\[doctest\\] " OR line MATCHES "^=+$")
      continue()
    endif()
    list(APPEND kept "${line}")
  endforeach()
  set(${out} "${kept}" PARENT_SCOPE)
endfunction()

function(bracket out value)  # a CMake bracket argument holding `value` verbatim
  set(eq "=")
  while(value MATCHES "\\]${eq}\\]")
    string(APPEND eq "=")
  endwhile()
  set(${out} "[${eq}[${value}]${eq}]" PARENT_SCOPE)
endfunction()

doctest_lines(cases --list-test-cases)
doctest_lines(suites --list-test-suites)
set(script "")
set(labelled "")
foreach(suite IN LISTS suites)
  if(suite MATCHES "[,*?\\\\]")
    message(FATAL_ERROR "${EXE}: test suite \"${suite}\": use a plain word as a suite name")
  endif()
  doctest_lines(members --test-suite=${suite} --list-test-cases)
  foreach(name IN LISTS members)
    if(name IN_LIST labelled)
      message(FATAL_ERROR "${EXE}: test case \"${name}\" is defined twice; names must be unique")
    endif()
    list(APPEND labelled "${name}")
    # doctest splits a filter at commas; a backslash escapes a comma or a backslash. (* and ? are
    # wildcards that doctest cannot escape; they still match themselves.)
    string(REPLACE "\\" "\\\\" filter "${name}")
    string(REPLACE "," "\\," filter "${filter}")
    bracket(test_name "${PREFIX}${name}")
    bracket(test_arg "--test-case=${filter}")
    bracket(exe_arg "${EXE}")
    bracket(dir_arg "${WORKDIR}")
    set(props "")
    foreach(p IN LISTS PROPERTIES)
      bracket(q "${p}")
      string(APPEND props " ${q}")
    endforeach()
    string(APPEND script "add_test(${test_name} ${exe_arg} ${test_arg})\n"
                         "set_tests_properties(${test_name} PROPERTIES WORKING_DIRECTORY "
                         "${dir_arg} LABELS ${suite}${props})\n")
  endforeach()
endforeach()
foreach(name IN LISTS cases)
  if(NOT name IN_LIST labelled)
    message(FATAL_ERROR "${EXE}: test case \"${name}\" is in no TEST_SUITE, so it would have no "
                        "ctest label; put it in unit, slow, golden, validation or gpu")
  endif()
endforeach()
file(WRITE "${CTEST_FILE}" "${script}")
