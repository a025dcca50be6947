# Issue 7: the GPU integrator on whatever OpenGL 4.3 context the machine gives (Mesa's
# llvmpipe in CI, through SDL's offscreen driver, EGL).  A test skips (exit 77) only when
# no 4.3 context can be created at all.
if(NOT TARGET PkgConfig::SDL2)
  pkg_check_modules(SDL2 REQUIRED IMPORTED_TARGET sdl2)
endif()
tela_add_test(test_gpu SOURCES test_gpu.c LIBS tela_gpu tela_demo PkgConfig::SDL2 LABELS gpu)
set_tests_properties(test_gpu PROPERTIES SKIP_RETURN_CODE 77
  ENVIRONMENT "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp"
  ENVIRONMENT_MODIFICATION "DISPLAY=unset:")

# `tela run --backend gpu` on a scene with an obstacle (the floor) and cloth that meets
# itself: the CPU's collision solver corrects the GPU's steps, and --check finds no
# intersecting triangle pair and no vertex inside the floor at any step.  The summary line
# proves the GPU ran (no fallback), and cloth-with-cloth impulses were applied.
tela_add_sh_test(gpu_run_pile_check "gpu;collision" [=[
"$1" run pile --backend gpu --seconds 3.5 --check --stats "$2.csv" >"$2" 2>&1 || { cat "$2"; exit 1; }
cat "$2"
grep -q '^backend gpu (' "$2" || { echo "FAIL: the GPU did not run"; exit 1; }
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
         { self += $col["self_contacts"]; bad += $col["intersections"] + $col["vertices_inside"] }
         END { print "cloth-with-cloth impulses: " self; exit (self > 0 && bad == 0) ? 0 : 1 }' "$2.csv"
]=])

# The GPU path is deterministic: two processes give the same state hash.
tela_add_sh_test(gpu_run_deterministic gpu [=[
for k in 1 2
do
  "$1" run hanging --backend gpu --integrator rk4 --steps 200 >"$2.$k" 2>&1 || { cat "$2.$k"; exit 1; }
  grep -q '^backend gpu (' "$2.$k" || { echo "FAIL: the GPU did not run"; exit 1; }
done
a=$(grep '^state hash ' "$2.1")
b=$(grep '^state hash ' "$2.2")
echo "$a / $b"
[ -n "$a" ] && [ "$a" = "$b" ] || { echo "FAIL: the two GPU runs differ"; exit 1; }
]=])

# No OpenGL context (an SDL video driver that does not exist): the GPU backend says so and
# the CPU runs, giving exactly the CPU's result.  The same for a scheme the GPU lacks.
tela_add_sh_test(gpu_run_fallback gpu [=[
SDL_VIDEODRIVER=no-such-driver "$1" run hanging --backend gpu --steps 100 >"$2" 2>&1 || { cat "$2"; exit 1; }
cat "$2"
grep -q 'tela run: --backend gpu: .*; the CPU runs instead' "$2" || { echo "FAIL: no fallback message"; exit 1; }
"$1" run hanging --steps 100 >"$2.cpu" || exit 1
[ "$(grep '^state hash ' "$2")" = "$(grep '^state hash ' "$2.cpu")" ] || { echo "FAIL: not the CPU's result"; exit 1; }
"$1" run hanging --backend gpu --integrator mra --steps 20 >"$2.mra" 2>&1 || { cat "$2.mra"; exit 1; }
grep -q 'the GPU has no mra integrator; the CPU runs instead' "$2.mra" || { cat "$2.mra"; exit 1; }
"$1" run hanging --integrator mra --steps 20 >"$2.mracpu" || exit 1
[ "$(grep '^state hash ' "$2.mra")" = "$(grep '^state hash ' "$2.mracpu")" ] || { echo "FAIL: mra differs"; exit 1; }
]=])

tela_add_exit_test(gpu_run_bad_backend LABELS "gpu;unit" CODE 2 MATCH "--backend: 'vulkan' is neither cpu nor gpu"
                   ARGS run hanging --backend vulkan)

foreach(t gpu_run_pile_check gpu_run_deterministic gpu_run_fallback)
  set_tests_properties(${t} PROPERTIES ENVIRONMENT "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp")
endforeach()
tela_add_exit_test(gpu_run_strain_needs_gpu LABELS "gpu;unit" CODE 2 MATCH "--gpu-strain-limit needs --backend gpu"
                   ARGS run hanging --gpu-strain-limit)

# The demo's GPU switch on the desktop path too: GLX under Xvfb, where it exists.
find_program(XVFB_RUN xvfb-run)
if(XVFB_RUN)
  add_test(NAME test_gpu_demo_xvfb
           COMMAND "${XVFB_RUN}" -a -s "-screen 0 640x480x24" $<TARGET_FILE:test_gpu> test_demo_switch)
  set_tests_properties(test_gpu_demo_xvfb PROPERTIES LABELS gpu TIMEOUT 600 SKIP_RETURN_CODE 77
    ENVIRONMENT "SDL_VIDEODRIVER=x11;LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp")
endif()
