# The libFuzzer harnesses (included by CMakeLists.txt when NORMLAB_FUZZ is on; clang only).
#
# Each harness is a CTest test that runs FUZZ_RUNS inputs (default 20000) starting from its
# seed corpus under fuzz/corpus/NAME (and the dictionary fuzz/NAME.dict where there is one);
# new inputs it finds go to a scratch corpus in the build directory, never into the source
# tree. -timeout turns an input that hangs into a failure, -rss_limit_mb one that allocates too
# much; a sanitizer report or an exception other than normlab's InputError and UsageError fails
# the test too.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "NORMLAB_FUZZ needs clang: cmake -DCMAKE_CXX_COMPILER=clang++ ...")
endif()
set(FUZZ_RUNS 20000 CACHE STRING "Inputs per harness in each CTest run")

set(FUZZ_HARNESSES checkpoint experiment tokens experiment_overrides claims store_query
                   python_args)
# What a harness needs beyond fuzz/fuzz_NAME.cpp and normlab_lib: sources of the program
# (apps/normlab) or of the Python module (python/src), libraries, and its environment.
set(fuzz_sources_tokens ${PROJECT_SOURCE_DIR}/apps/normlab/token_list.cpp)
set(fuzz_sources_store_query ${PROJECT_SOURCE_DIR}/apps/normlab/query_table.cpp)
file(GLOB fuzz_sources_python_args ${PROJECT_SOURCE_DIR}/python/src/*.cpp)
set(fuzz_includes_python_args ${PROJECT_SOURCE_DIR}/python/src)
set(fuzz_libraries_python_args pybind11::embed)
# Each of their inputs reads several files and every sweep point, or evaluates every claim:
# about 100 and 60 inputs a second on a shared 2-core machine, against 300 and more for the
# others. Fewer inputs keep each test near a minute.
set(fuzz_runs_experiment_overrides 5000)
set(fuzz_runs_claims 4000)
# The embedded interpreter and numpy keep their allocations until exit: no leak check there.
set(fuzz_leaks_python_args 0)
# Debian's interpreter, with numpy (python/CMakeLists.txt says why).
set(Python3_EXECUTABLE /usr/bin/python3)
find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Embed)
find_package(pybind11 CONFIG REQUIRED)

enable_testing()
foreach(name ${FUZZ_HARNESSES})
  add_executable(fuzz_${name} ${PROJECT_SOURCE_DIR}/fuzz/fuzz_${name}.cpp ${fuzz_sources_${name}})
  target_include_directories(fuzz_${name} PRIVATE ${PROJECT_SOURCE_DIR}/apps/normlab
                                                  ${PROJECT_SOURCE_DIR}/src
                                                  ${fuzz_includes_${name}})
  target_link_libraries(fuzz_${name} PRIVATE normlab_lib ${fuzz_libraries_${name}})
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
  set(scratch ${CMAKE_CURRENT_BINARY_DIR}/fuzz_corpus/${name})
  file(MAKE_DIRECTORY ${scratch})
  set(dict "")
  if(EXISTS ${PROJECT_SOURCE_DIR}/fuzz/${name}.dict)
    set(dict -dict=${PROJECT_SOURCE_DIR}/fuzz/${name}.dict)
  endif()
  set(runs ${FUZZ_RUNS})
  if(DEFINED fuzz_runs_${name})
    set(runs ${fuzz_runs_${name}})
  endif()
  set(leaks 1)
  if(DEFINED fuzz_leaks_${name})
    set(leaks ${fuzz_leaks_${name}})
  endif()
  add_test(NAME fuzz_${name}
           COMMAND fuzz_${name} -runs=${runs} -seed=1 -timeout=10 -rss_limit_mb=2048
                   -max_len=16384 -print_final_stats=1 ${dict} ${scratch}
                   ${PROJECT_SOURCE_DIR}/fuzz/corpus/${name})
  # Sanitizer reports end the process; leaks are checked at exit.
  set_tests_properties(fuzz_${name} PROPERTIES
                       ENVIRONMENT "ASAN_OPTIONS=detect_leaks=${leaks};UBSAN_OPTIONS=print_stacktrace=1")
endforeach()
