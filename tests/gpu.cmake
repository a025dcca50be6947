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
  # and the window drawing from the simulation thread's buffers across two GLX contexts
  add_test(NAME test_gpu_draw_xvfb
           COMMAND "${XVFB_RUN}" -a -s "-screen 0 640x480x24" $<TARGET_FILE:test_gpu> test_demo_draws_from_gpu_buffer)
  set_tests_properties(test_gpu_draw_xvfb PROPERTIES LABELS gpu TIMEOUT 600 SKIP_RETURN_CODE 77
    ENVIRONMENT "SDL_VIDEODRIVER=x11;LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp")
endif()

# `tela bench gpu` writes what docs/benchmarks.md shows (a benchmark, so nothing here is
# timed): the CSV's rows for both sides (every scheme on the CPU, all but mra on the GPU,
# with finite positive rates) and a throughput chart with one line per measured series
# (8 CPU + 7 GPU + 7 GPU-only), and no chart for a part not run.
tela_add_sh_test(gpu_bench_outputs gpu [=[
mkdir -p "$2" || exit 1
"$1" bench gpu --only throughput --sizes 4,8 --steps 2 --csv "$2/g.csv" --svg "$2/g" >"$2/out.txt" 2>&1 || { cat "$2/out.txt"; exit 1; }
[ "$(head -n 1 "$2/g.csv")" = "part,integrator,backend,variant,n,vertices,dt,value,steps" ] || { echo "FAIL: header"; exit 1; }
awk -F, 'NR > 1 && $1 == "throughput" {
  rows++
  ok = ($8 + 0 > 0) && $8 != "nan"
  if ($3 == "cpu" || $2 != "mra") { if (!ok) { print "FAIL: " $0; bad = 1 } }
  else if ($8 != "nan") { print "FAIL: mra on the GPU: " $0; bad = 1 }
}
END { if (rows != 2 * 8 * 3) { print "FAIL: " rows " throughput rows"; bad = 1 }; exit bad }' "$2/g.csv" || exit 1
# the table says n/a for the figures not measured (mra has no GPU scheme), never nan
grep -q -w nan "$2/out.txt" && { cat "$2/out.txt"; echo "FAIL: the table prints nan"; exit 1; }
grep -q '^mra .* n/a' "$2/out.txt" || { cat "$2/out.txt"; echo "FAIL: mra's GPU columns do not read n/a"; exit 1; }
svg="$2/g-throughput.svg"
head -c 4 "$svg" | grep -q '<svg' || { echo "FAIL: not an SVG"; exit 1; }
tail -n 1 "$svg" | grep -q '^</svg>$' || { echo "FAIL: unterminated SVG"; exit 1; }
lines=$(grep -c '<polyline' "$svg")
[ "$lines" -eq 22 ] || { echo "FAIL: $lines lines in the chart, expected 22"; exit 1; }
[ ! -e "$2/g-stability.svg" ] && [ ! -e "$2/g-elongation.svg" ] || { echo "FAIL: charts of parts not run"; exit 1; }
]=])
set_tests_properties(gpu_bench_outputs PROPERTIES ENVIRONMENT "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp")
# --only draw: the demo's draw hand-over, four finite positive figures per size, and
# nothing of the other parts.
tela_add_sh_test(gpu_bench_draw gpu [=[
mkdir -p "$2" || exit 1
"$1" bench gpu --only draw --sizes 4,8 --steps 2 --csv "$2/d.csv" >"$2/out.txt" 2>&1 || { cat "$2/out.txt"; exit 1; }
cat "$2/out.txt"
awk -F, 'NR > 1 { if ($1 != "draw_us" || !($8 + 0 > 0) || $8 == "nan" || $8 == "inf") { print "FAIL: " $0; bad = 1 }; rows++ }
END { if (rows != 2 * 4) { print "FAIL: " rows " rows"; bad = 1 }; exit bad }' "$2/d.csv"
]=])
set_tests_properties(gpu_bench_draw PROPERTIES ENVIRONMENT "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp")
tela_add_exit_test(gpu_bench_bad_part LABELS "gpu;unit" CODE 2 MATCH "--only: 'speed' is not throughput, stability, elongation or draw"
                   ARGS bench gpu --only speed)

# The headless demo with `--backend gpu`: the simulation thread steps on the GPU and the
# scripted grab (an attachment, applied by the CPU between GPU substeps) still pulls the
# corner along with the pointer.
tela_add_sh_test(gpu_demo_headless gpu [=[
mkdir -p "$2" && cd "$2" || exit 1
env -u DISPLAY -u WAYLAND_DISPLAY "$1" hanging --headless --seconds 1 --backend gpu >out.txt 2>&1 || { cat out.txt; exit 1; }
cat out.txt
grep -q "integrator on the GPU" out.txt || { echo "FAIL: the GPU did not step"; exit 1; }
awk '/scripted grab:/ { for (i = 1; i <= NF; i++) if ($i == "followed") { split($(i + 1), m, "m"); moved = m[1] } }
     END { exit moved > 0.25 ? 0 : 1 }' out.txt || { echo "FAIL: the grabbed vertex did not follow"; exit 1; }
]=])
set_tests_properties(gpu_demo_headless PROPERTIES ENVIRONMENT "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp")

# The demo's GPU draw buffers change hands through the simulation thread's triple buffer:
# the writer never gets the slot the window holds, and sees the window's marks (its
# fences, in the demo) when it gets the slot back.  Threads, no GL.
tela_add_test(test_gpu_ring SOURCES test_gpu_ring.c LIBS tela_demo_core tela_scenes tela_sim LABELS "gpu;unit")
