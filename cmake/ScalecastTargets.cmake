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
  doctest_discover_tests(test_${name} TEST_PREFIX "${name}." ADD_LABELS 1
                         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
endfunction()
