# cmake -P test of cmake/ScalecastDoctestAddTests.cmake (ctest repo.doctest_discovery): the ctest
# entries it writes for a fake doctest executable (fake_doctest.sh), and the names it refuses.
# Input: SOURCE_DIR, WORK_DIR.
set(script "${SOURCE_DIR}/cmake/ScalecastDoctestAddTests.cmake")
set(fake "${SOURCE_DIR}/tests/repo/fake_doctest.sh")
file(MAKE_DIRECTORY "${WORK_DIR}")

function(discover cases out_rc out_text)
  set(ENV{FAKE_CASES} "${cases}")
  execute_process(COMMAND "${CMAKE_COMMAND}" -D "EXE=${fake}" -D "PREFIX=t." -D "WORKDIR=${WORK_DIR}"
                          -D "PROPERTIES=RUN_SERIAL;TRUE" -D "CTEST_FILE=${WORK_DIR}/tests.cmake"
                          -P "${script}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  set(${out_rc} "${rc}" PARENT_SCOPE)
  set(${out_text} "${o}${e}" PARENT_SCOPE)
endfunction()

# expect(message condition...): stop with `message` unless the condition holds.
function(expect message)
  if(NOT (${ARGN}))
    message(FATAL_ERROR "${message}")
  endif()
endfunction()

# A comma in a name: labelled by its suite, and escaped for doctest's filter.
discover("unit|plain name\nslow|a, b and c\nunit|back\\slash" rc text)
expect("discovery failed: ${text}" rc EQUAL 0)
file(READ "${WORK_DIR}/tests.cmake" written)
string(FIND "${written}" "add_test([=[t.a, b and c]=]" at)
expect("no ctest entry for the comma name:\n${written}" at GREATER -1)
string(FIND "${written}" "[=[--test-case=a\\, b and c]=]" at)
expect("the comma is not escaped for doctest:\n${written}" at GREATER -1)
string(FIND "${written}" "[=[--test-case=back\\\\slash]=]" at)
expect("the backslash is not escaped for doctest:\n${written}" at GREATER -1)
string(FIND "${written}" "set_tests_properties([=[t.a, b and c]=] PROPERTIES WORKING_DIRECTORY [=[${WORK_DIR}]=] LABELS slow [=[RUN_SERIAL]=] [=[TRUE]=])" at)
expect("wrong label or properties:\n${written}" at GREATER -1)
string(REGEX MATCHALL "add_test\\(" adds "${written}")
list(LENGTH adds n)
expect("expected 3 ctest entries, got ${n}:\n${written}" n EQUAL 3)

# Refused: a semicolon (CMake would split the name), a test case in no suite, a name twice.
foreach(bad "unit|one; two" "|no suite" "unit|twice\nslow|twice")
  discover("${bad}" rc text)
  expect("accepted: ${bad}" NOT rc EQUAL 0)
endforeach()
discover("unit|one; two" rc text)
expect("the error does not say why: ${text}" text MATCHES "semicolon")
discover("|no suite" rc text)
expect("the error does not say why: ${text}" text MATCHES "in no[ \n]+TEST_SUITE")
message(STATUS "doctest discovery: labels, escapes and refusals as expected")
