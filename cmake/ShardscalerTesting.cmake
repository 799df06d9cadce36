# Test registration: every test binary is one ctest test, run as one process. A unit test
# binary's cases take milliseconds, while starting a sanitized process and its leak check at exit
# take a quarter of a second; one case of a binary runs as <build>/bin/<binary> --gtest_filter=...
# Tests against real servers (labels "integration" and "e2e") also start their servers once.
include_guard(GLOBAL)

# SHARDSCALER_TEST_CXX_FLAGS go to the sources of each test executable, not to the code under
# test or the shared test support (tests/support), which keep the build's flags.
separate_arguments(shardscaler_test_cxx_flags UNIX_COMMAND "${SHARDSCALER_TEST_CXX_FLAGS}")

# shardscaler_unit_test(<name> [LABEL tools] [KEEP_BUILD_FLAGS] SOURCES ... LIBS ...)
# LABEL tools: no server either, but the test runs tools of this machine (kubectl, the built
# binary), so it is not a unit test of a class.
# KEEP_BUILD_FLAGS: without SHARDSCALER_TEST_CXX_FLAGS, for tests that spend their time in their
# own code.
function(shardscaler_unit_test name)
  cmake_parse_arguments(ARG "KEEP_BUILD_FLAGS" "LABEL" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_LABEL)
    set(ARG_LABEL unit)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  if(NOT ARG_KEEP_BUILD_FLAGS)
    target_compile_options(${name} PRIVATE ${shardscaler_test_cxx_flags})
  endif()
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gmock GTest::gtest_main
                                        shardscaler::build_options)
  if(ARG_LABEL STREQUAL "unit" AND NOT SHARDSCALER_UNIT_TESTS_IN_ALL)
    set_target_properties(${name} PROPERTIES EXCLUDE_FROM_ALL TRUE)
  endif()
  # The timeout only ends a hung binary. Under a sanitizer the heaviest unit tests (the planner's
  # property tests, the lagging-operator runs) take several times as long, more so at the lowest
  # CPU priority beside the server tests, as hack/checks.sh runs them.
  set(timeout 600)
  if(SHARDSCALER_SANITIZE OR SHARDSCALER_TSAN OR SHARDSCALER_FUZZ)
    set(timeout 1800)
  endif()
  add_test(NAME ${name} COMMAND ${name} --gtest_color=no)
  set_tests_properties(${name} PROPERTIES LABELS ${ARG_LABEL} TIMEOUT ${timeout})
  set_property(GLOBAL APPEND PROPERTY SHARDSCALER_TESTS_${ARG_LABEL} ${name})
endfunction()

# shardscaler_label_target(<label>): a target <label>_tests that builds every test executable of
# that label and nothing else (the sanitizer builds run only the unit tests).
function(shardscaler_label_target label)
  get_property(executables GLOBAL PROPERTY SHARDSCALER_TESTS_${label})
  add_custom_target(${label}_tests)
  if(executables)
    add_dependencies(${label}_tests ${executables})
  endif()
endfunction()

# shardscaler_server_test(<name> LABEL integration|e2e [SERIAL] [TIMEOUT s] SOURCES ... LIBS ...)
# Each binary starts its own servers on free loopback ports and mostly waits on them, so the test
# command runs one more than the cores at a time (ctest -j). SERIAL: the outcome depends on timing
# (a bound on how long something takes, a rate from real scrapes, a lag against a settle time, a
# request count paced by time). Such tests run one at a time (the resource lock "timing") at the
# normal CPU priority, and every other server test at nice 10 (its servers inherit it): beside one,
# a timing test's servers and shardscaler get the CPU whenever they want it, and the other lanes
# keep working instead of waiting for it.
find_program(SHARDSCALER_NICE nice REQUIRED)
function(shardscaler_server_test name)
  cmake_parse_arguments(ARG "SERIAL" "LABEL;TIMEOUT" "SOURCES;LIBS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 900)
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE ${shardscaler_test_cxx_flags})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gmock GTest::gtest
                                        shardscaler::build_options)
  if(ARG_SERIAL)
    add_test(NAME ${name} COMMAND ${name} --gtest_color=no)
    set_tests_properties(${name} PROPERTIES RESOURCE_LOCK timing)
  else()
    add_test(NAME ${name} COMMAND ${SHARDSCALER_NICE} -n 10 $<TARGET_FILE:${name}> --gtest_color=no)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS ${ARG_LABEL} TIMEOUT ${ARG_TIMEOUT})
endfunction()
