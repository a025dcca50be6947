# stylus.cmake: the grabbing pointer (app/stylus.c) against hand-computed cases, and a
# recorded session replayed into a scene in lock step (issue 6, "The grabbing pointer").
tela_add_test(test_stylus SOURCES test_stylus.c LIBS tela_stylus LABELS unit)

# The recorded session (made with `tela run tests/data/scenes/stylus-corner.ini --device
# synthetic:grab,fast,seconds=3 --calibration tests/data/tracking/stylus-corner.cal
# --record tests/data/sessions/grab.rec`) replayed into the scene in lock step: the
# stylus grabs the free corner at 1 s, lifts it, and lets go at 2.5 s; the corner must
# have risen 10 cm (the script's lift, gain 1) within 5 mm, and two runs, and the
# synthetic source itself, must end in the same state.
tela_add_sh_test(stylus_replay_lifts_corner device [=[
data=$3
set -- "$1" "$2" run "$data/scenes/stylus-corner.ini" --calibration "$data/tracking/stylus-corner.cal"
tela=$1
out=$2
shift 2
mkdir -p "$out" || exit 1
"$tela" "$@" --device "replay:$data/sessions/grab.rec@0" >"$out/a.txt" 2>&1 || { cat "$out/a.txt"; exit 1; }
"$tela" "$@" --device "replay:$data/sessions/grab.rec@0" >"$out/b.txt" 2>&1 || { cat "$out/b.txt"; exit 1; }
"$tela" "$@" --device synthetic:grab,fast,seconds=3 --record "$out/again.rec" >"$out/c.txt" 2>&1 || { cat "$out/c.txt"; exit 1; }
cat "$out/a.txt"
grep -q "1 grabs, 1 releases" "$out/a.txt" || { echo "FAIL: not one grab and one release"; exit 1; }
line=$(grep "stylus: vertex 80 grabbed at 1.000 s" "$out/a.txt") || { echo "FAIL: corner 80 not grabbed at 1 s"; exit 1; }
dy=$(echo "$line" | sed -n 's/.*moved \([^ ]*\) \([^ ]*\) \([^ ]*\) m$/\2/p')
awk -v dy="$dy" 'BEGIN { exit !(dy >= 0.095 && dy <= 0.105) }' || { echo "FAIL: the corner rose $dy m, expected 0.1"; exit 1; }
ha=$(grep "state hash" "$out/a.txt")
[ "$ha" = "$(grep "state hash" "$out/b.txt")" ] || { echo "FAIL: two replays differ"; exit 1; }
[ "$ha" = "$(grep "state hash" "$out/c.txt")" ] || { echo "FAIL: the replay differs from the synthetic source"; exit 1; }
exit 0
]=] "${CMAKE_CURRENT_SOURCE_DIR}/data")

# The options' errors.
tela_add_exit_test(stylus_run_bad_device CODE 3 MATCH "--device nosuch" LABELS "device;unit"
                   ARGS run hanging --steps 1 --device nosuch)
tela_add_exit_test(stylus_run_options_need_device CODE 2 MATCH "need --device" LABELS unit
                   ARGS run hanging --steps 1 --gain 0.5)
# --record alone records the mouse, which a headless demo has none of.
tela_add_exit_test(demo_record_mouse_headless CODE 2 MATCH "records the mouse" LABELS unit
                   ARGS hanging --headless --record mouse.rec)

# The headless demo in lock step with the same session: the stylus grabs through the
# simulation thread (ST_GRAB, st_set_pointer, ST_RELEASE) and the summary says so.
tela_add_sh_test(stylus_headless_demo "device;render" [=[
data=$3
mkdir -p "$2" && cd "$2" || exit 1
env -u DISPLAY -u WAYLAND_DISPLAY "$1" "$data/scenes/stylus-corner.ini" --headless --seconds 3 \
  --device "replay:$data/sessions/grab.rec@0" --calibration "$data/tracking/stylus-corner.cal" >out.txt 2>&1
rc=$?
cat out.txt
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
grep -q "180 samples, 1 grabs, 1 releases" out.txt || { echo "FAIL: the stylus did not grab and release"; exit 1; }
grep -q "scripted grab" out.txt && { echo "FAIL: the scripted grab ran with a device"; exit 1; }
exit 0
]=] "${CMAKE_CURRENT_SOURCE_DIR}/data")

# `tela bench latency` times every sample once on each path: half a second at 240 Hz is 120
# samples, delivered in lock step and through the window's device and simulation threads.
# (The figures are the benchmark's business, docs/benchmarks.md; this checks the counting.)
tela_add_sh_test(bench_latency_counts_every_sample device [=[
"$1" bench latency --seconds 0.5 --rate 240 >"$2.txt" 2>&1
rc=$?
cat "$2.txt"
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
grep -q "^lockstep  samples 120, p50" "$2.txt" || { echo "FAIL: lock step did not time 120 samples"; exit 1; }
grep -q "^window    samples 120, p50" "$2.txt" || { echo "FAIL: the window's path did not time 120 samples"; exit 1; }
grep -q "not timed" "$2.txt" && { echo "FAIL: samples went untimed"; exit 1; }
exit 0
]=])

# The patch grab (app/grab.c, --grab-radius) against exact geometry.
tela_add_test(test_grab SOURCES test_grab.c LIBS tela_demo_core LABELS unit)
# The same session with --grab-radius 0.08: the grid's spacing is 5 cm, so the corner's
# patch is the corner and its three neighbours (5, 5 and 7.07 cm away), lifted together.
tela_add_sh_test(stylus_replay_grabs_patch device [=[
data=$3
"$1" run "$data/scenes/stylus-corner.ini" --calibration "$data/tracking/stylus-corner.cal" \
  --device "replay:$data/sessions/grab.rec@0" --grab-radius 0.08 >"$2.txt" 2>&1 || { cat "$2.txt"; exit 1; }
cat "$2.txt"
line=$(grep "stylus: vertex 80 grabbed at 1.000 s from (0.2000, 1.0000, 0.2000), with 3 vertices around it" "$2.txt") ||
  { echo "FAIL: the corner's patch is not the corner and its 3 neighbours"; exit 1; }
dy=$(echo "$line" | sed -n 's/.*moved \([^ ]*\) \([^ ]*\) \([^ ]*\) m$/\2/p')
awk -v dy="$dy" 'BEGIN { exit !(dy >= 0.095 && dy <= 0.105) }' || { echo "FAIL: the corner rose $dy m, expected 0.1"; exit 1; }
exit 0
]=] "${CMAKE_CURRENT_SOURCE_DIR}/data")
tela_add_exit_test(stylus_run_bad_grab_radius CODE 2 MATCH "--grab-radius" LABELS unit
                   ARGS run hanging --steps 1 --device synthetic:still --grab-radius -1)
