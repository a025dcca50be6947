# libFuzzer targets for the file readers: STL, OBJ and PLY meshes, velocity constraints
# and scene files.  Only a clang build with TELA_FUZZ=ON builds them (./build.sh test does,
# in build-fuzz); the top-level CMakeLists.txt then instruments every library for coverage
# and the sanitizers, so that the fuzzers see inside the readers.
option(TELA_FUZZ "Build the libFuzzer targets (clang)" OFF)
if(NOT TELA_FUZZ)
  return()
endif()

set(TELA_FUZZ_DIR "${CMAKE_CURRENT_SOURCE_DIR}/fuzz")
add_custom_target(fuzz)

# Each test fuzzes a fresh copy of the seed corpus in the build tree (libFuzzer adds the
# inputs it finds to its corpus folder; the source tree stays untouched), from a fixed
# seed for a fixed number of runs, so that it is deterministic and takes seconds (RUNS is
# sized for about 5 s each on one core).  A crash, a leak, a sanitizer report or a failed
# invariant makes libFuzzer exit non-zero and writes the input to fuzz/KIND-crash-* here.
function(tela_add_fuzzer kind runs)
  set(target fuzz_${kind})
  add_executable(${target} fuzz/fuzz_${kind}.c)
  target_link_libraries(${target} PRIVATE tela_scenes tela_sim)
  target_compile_options(${target} PRIVATE -fsanitize=fuzzer)
  target_link_options(${target} PRIVATE -fsanitize=fuzzer)
  add_dependencies(fuzz ${target})
  set(work "${CMAKE_CURRENT_BINARY_DIR}/fuzz/${kind}")
  add_test(NAME ${target}
           COMMAND sh -c [=[
rm -rf "$2" && mkdir -p "$2" && cp "$3"/* "$2"/ || exit 1
exec "$1" -seed=1 -runs="$4" -max_len=4096 -timeout=10 -rss_limit_mb=2048 -dict="$5" \
     -artifact_prefix="$2-crash-" -print_final_stats=1 "$2"
]=] ${target} $<TARGET_FILE:${target}> "${work}" "${TELA_FUZZ_DIR}/corpus/${kind}" "${runs}"
                   "${TELA_FUZZ_DIR}/${kind}.dict")
  set_tests_properties(${target} PROPERTIES LABELS fuzz TIMEOUT 300)
endfunction()

tela_add_fuzzer(stl 150000)
tela_add_fuzzer(obj 50000)
tela_add_fuzzer(ply 50000)
tela_add_fuzzer(vel 200000)
tela_add_fuzzer(scene 120000)
# The scene target reads the internals to skip building worlds too large for a fuzz run.
target_include_directories(fuzz_scene PRIVATE "${PROJECT_SOURCE_DIR}/scenes/src")
target_compile_definitions(fuzz_scene PRIVATE TELA_FUZZ_ASSETS="${TELA_FUZZ_DIR}/assets")

# The Polhemus record parser (issue 6, devices/src/parser.c): a byte stream as USB delivers
# it, cut into transfers by the first byte.
tela_add_fuzzer(polhemus 300000)
target_link_libraries(fuzz_polhemus PRIVATE tela_devices)
