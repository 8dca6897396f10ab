# stepscope_library(NAME SOURCES... DEPS ...): one library target per module.
function(stepscope_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${ARG_DEPS})
endfunction()

# stepscope_test(NAME SOURCES... DEPS ...): a GoogleTest binary registered with ctest.
function(stepscope_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT ${ARG_TIMEOUT})
endfunction()

# stepscope_mpi_test(NAME NP SOURCES... DEPS ...): a GoogleTest binary run under mpirun -np NP.
# Each NP in the NPS list becomes its own ctest entry NAME_npN.
function(stepscope_mpi_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS;NPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest)
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  foreach(np ${ARG_NPS})
    add_test(NAME ${name}_np${np}
             COMMAND ${PROJECT_SOURCE_DIR}/scripts/mpirun-local.sh ${np} $<TARGET_FILE:${name}>)
    set_tests_properties(${name}_np${np} PROPERTIES TIMEOUT ${ARG_TIMEOUT} PROCESSORS ${np})
  endforeach()
endfunction()
