# The libFuzzer harnesses (included by CMakeLists.txt when NORMLAB_FUZZ is on; clang only).
#
# Each harness is a CTest test that runs FUZZ_RUNS inputs (default 20000) starting from its
# seed corpus under fuzz/corpus/NAME; new inputs it finds go to a scratch corpus in the build
# directory, never into the source tree. -timeout turns an input that hangs into a failure,
# -rss_limit_mb one that allocates too much; a sanitizer report or an exception other than
# normlab's InputError and UsageError fails the test too.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "NORMLAB_FUZZ needs clang: cmake -DCMAKE_CXX_COMPILER=clang++ ...")
endif()
set(FUZZ_RUNS 20000 CACHE STRING "Inputs per harness in each CTest run")

enable_testing()
foreach(name checkpoint experiment tokens)
  set(extra_sources "")
  if(name STREQUAL "tokens")
    set(extra_sources ${PROJECT_SOURCE_DIR}/apps/normlab/token_list.cpp)
  endif()
  add_executable(fuzz_${name} ${PROJECT_SOURCE_DIR}/fuzz/fuzz_${name}.cpp ${extra_sources})
  target_include_directories(fuzz_${name} PRIVATE ${PROJECT_SOURCE_DIR}/apps/normlab
                                                  ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(fuzz_${name} PRIVATE normlab_lib)
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
  set(scratch ${CMAKE_CURRENT_BINARY_DIR}/fuzz_corpus/${name})
  file(MAKE_DIRECTORY ${scratch})
  add_test(NAME fuzz_${name}
           COMMAND fuzz_${name} -runs=${FUZZ_RUNS} -seed=1 -timeout=10 -rss_limit_mb=2048
                   -max_len=16384 -print_final_stats=1 ${scratch}
                   ${PROJECT_SOURCE_DIR}/fuzz/corpus/${name})
  # Sanitizer reports end the process; leaks are checked at exit.
  set_tests_properties(fuzz_${name} PROPERTIES
                       ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1;UBSAN_OPTIONS=print_stacktrace=1")
endforeach()
