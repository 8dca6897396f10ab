# stepscope_library(NAME SOURCES... DEPS ...): one library target per module.
function(stepscope_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# Every test carries exactly one ctest label: `unit` (GoogleTest binaries, MPI unit tests),
# `e2e` (end-to-end tests of the command line, the browser test) or `slow` (any test that takes
# over about a minute), so that `ctest -L unit` is the quick run.

# stepscope_test(NAME SOURCES... DEPS ... [LABEL unit|slow]): a GoogleTest binary registered
# with ctest, one entry per test case.
function(stepscope_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT;LABEL" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  if(NOT ARG_LABEL)
    set(ARG_LABEL unit)
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60
                       PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS ${ARG_LABEL})
endfunction()

# stepscope_mpi_test(NAME NP SOURCES... DEPS ... [LABEL unit|slow]): a GoogleTest binary run
# under mpirun -np NP. Each NP in the NPS list becomes its own ctest entry NAME_npN.
function(stepscope_mpi_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT;LABEL" "SOURCES;DEPS;NPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest)
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  if(NOT ARG_LABEL)
    set(ARG_LABEL unit)
  endif()
  foreach(np ${ARG_NPS})
    add_test(NAME ${name}_np${np}
             COMMAND ${PROJECT_SOURCE_DIR}/scripts/mpirun-local.sh ${np} $<TARGET_FILE:${name}>)
    set_tests_properties(${name}_np${np} PROPERTIES TIMEOUT ${ARG_TIMEOUT} PROCESSORS ${np}
                         LABELS ${ARG_LABEL})
  endforeach()
endfunction()
