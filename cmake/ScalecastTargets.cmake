# Shared build settings: warnings and sanitizers live on INTERFACE targets that every scalecast
# target links, so CMAKE_CXX_FLAGS is never edited.
add_library(scalecast_warnings INTERFACE)
target_compile_options(scalecast_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow>
  $<$<AND:$<BOOL:${SCALECAST_WERROR}>,$<COMPILE_LANGUAGE:CXX>>:-Werror>)

add_library(scalecast_sanitizers INTERFACE)
if(SCALECAST_SANITIZE)
  target_compile_options(scalecast_sanitizers INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer)
  target_link_options(scalecast_sanitizers INTERFACE -fsanitize=address,undefined)
endif()

# scalecast_library(NAME folder SOURCES ... DEPS ...): one library per folder, explicit sources,
# includes rooted at the repository, namespace-style ALIAS scalecast::folder.
function(scalecast_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  if(NOT ARG_SOURCES)
    # A folder whose capability is not written yet: a header-only target keeps the layering.
    add_library(scalecast_${name} INTERFACE)
    add_library(scalecast::${name} ALIAS scalecast_${name})
    target_include_directories(scalecast_${name} INTERFACE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
    target_link_libraries(scalecast_${name} INTERFACE ${ARG_DEPS})
    return()
  endif()
  add_library(scalecast_${name} STATIC ${ARG_SOURCES})
  add_library(scalecast::${name} ALIAS scalecast_${name})
  target_include_directories(scalecast_${name} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
  target_link_libraries(scalecast_${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS}
                        scalecast_warnings scalecast_sanitizers)
endfunction()

# scalecast_discover_doctests(TARGET PREFIX [PROPERTIES ...]): after TARGET is built, one ctest
# entry PREFIX<test case> per doctest test case, labelled with its test suite, running in the
# source tree, with the extra test PROPERTIES (cmake/ScalecastDoctestAddTests.cmake says why this
# is not doctest's own doctest_discover_tests).
function(scalecast_discover_doctests target prefix)
  cmake_parse_arguments(ARG "" "" "PROPERTIES" ${ARGN})
  set(tests_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_tests.cmake")
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake")
  add_custom_command(TARGET ${target} POST_BUILD
    BYPRODUCTS "${tests_file}"
    COMMAND "${CMAKE_COMMAND}" -D "EXE=$<TARGET_FILE:${target}>" -D "PREFIX=${prefix}"
            -D "WORKDIR=${PROJECT_SOURCE_DIR}" -D "PROPERTIES=${ARG_PROPERTIES}"
            -D "CTEST_FILE=${tests_file}" -P "${PROJECT_SOURCE_DIR}/cmake/ScalecastDoctestAddTests.cmake"
    VERBATIM)
  file(WRITE "${include_file}"
    "if(EXISTS \"${tests_file}\")\n  include(\"${tests_file}\")\nelse()\n"
    "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()

# scalecast_test(NAME SOURCES ... DEPS ...): one doctest executable per library. Each test case
# becomes its own ctest entry; its doctest test suite ("unit", "golden", "validation", "gpu",
# "slow") becomes its ctest label.
function(scalecast_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(test_${name} ${PROJECT_SOURCE_DIR}/tests/doctest_main.cpp ${ARG_SOURCES})
  target_link_libraries(test_${name} PRIVATE ${ARG_DEPS} doctest::doctest scalecast_warnings scalecast_sanitizers)
  target_compile_definitions(test_${name} PRIVATE
    SCALECAST_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    SCALECAST_BINARY_DIR="${PROJECT_BINARY_DIR}")
  scalecast_discover_doctests(test_${name} "${name}." PROPERTIES ENVIRONMENT ${SCALECAST_TEST_ENVIRONMENT})
endfunction()

# The environment of every test: guard pages below actor stacks (sim/engine_setup.hpp), so an
# actor kind that outgrows its stack faults in the test that runs it instead of writing over the
# heap. scalecast_test() gives it to the doctest entries; every tests/ folder that calls add_test
# ends with scalecast_test_environment(), which gives it to the folder's other tests (the
# scalecast runs of tests/cli among them).
set(SCALECAST_TEST_ENVIRONMENT SCALECAST_STACK_GUARD=1)
function(scalecast_test_environment)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tests)
    set_property(TEST ${t} APPEND PROPERTY ENVIRONMENT ${SCALECAST_TEST_ENVIRONMENT})
  endforeach()
endfunction()
