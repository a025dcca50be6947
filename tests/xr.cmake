# Issue 8: head-mounted viewing through OpenXR, against a test runtime (tests/xr_runtime.c),
# with Debian's OpenXR core validation layer on.  Label xr.
#
# The runtime is a test fixture: a module library in the test build tree, found by the
# loader only through the manifest written next to it (XR_RUNTIME_JSON); nothing links
# it and nothing installs it.
pkg_check_modules(XR_TEST_OPENXR REQUIRED IMPORTED_TARGET openxr)
find_package(OpenGL REQUIRED COMPONENTS OpenGL GLX)
find_package(Threads REQUIRED)
add_library(tela_xr_test_runtime MODULE xr_runtime.c)
target_link_libraries(tela_xr_test_runtime PRIVATE PkgConfig::XR_TEST_OPENXR OpenGL::GL OpenGL::GLX ${MATH_LIBRARY} Threads::Threads)
set_target_properties(tela_xr_test_runtime PROPERTIES C_VISIBILITY_PRESET hidden PREFIX "lib")
set(TELA_XR_RUNTIME_JSON "${CMAKE_CURRENT_BINARY_DIR}/xr_test_runtime.json")
file(GENERATE OUTPUT "${TELA_XR_RUNTIME_JSON}" CONTENT "{
    \"file_format_version\": \"1.0.0\",
    \"runtime\": {
        \"name\": \"tela test runtime\",
        \"library_path\": \"$<TARGET_FILE:tela_xr_test_runtime>\"
    }
}
")

# The runtime's answers to wrong arguments, and the validation layer's report channel.
tela_add_test(test_xr_validation SOURCES test_xr_validation.c LIBS PkgConfig::XR_TEST_OPENXR LABELS xr)
set_tests_properties(test_xr_validation PROPERTIES ENVIRONMENT "XR_RUNTIME_JSON=${TELA_XR_RUNTIME_JSON}")
add_dependencies(test_xr_validation tela_xr_test_runtime)

# The eye image's check (the expected picture comes from the script's geometry).
add_executable(test_xr_eye test_xr_eye.c)
target_include_directories(test_xr_eye PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(test_xr_eye PRIVATE ${MATH_LIBRARY})
add_dependencies(test_xr_eye tela_xr_test_runtime)

# tela --xr runs in real time: on a loaded machine the simulation falls into slow motion
# and a lifted corner may still be a centimetre short of the hand when it is let go, hence
# the 8 cm floor on the 10 cm lifts below (a failed grab leaves it at 0).
#
# Runs `tela --xr ARGS` under Xvfb against the test runtime with the core validation layer
# on: $1 tela, $2 scratch folder, $3 the runtime's manifest, $4 tests/data, $5 xvfb-run,
# $6 test_xr_eye; the script ($SCRIPT, a file under tests/data/xr) and tela's arguments
# follow.  Leaves out.txt (tela's output), log.txt (the runtime's), eye.ppm and rc.
set(TELA_XR_RUN [=[
tela=$1 out=$2 json=$3 data=$4 xvfb=$5 eye_check=$6
script=$7
shift 7
mkdir -p "$out" && cd "$out" || exit 1
rm -f validation.txt log.txt eye.ppm hands.rec
XR_RUNTIME_JSON="$json" XR_ENABLE_API_LAYERS=XR_APILAYER_LUNARG_core_validation \
XR_CORE_VALIDATION_EXPORT_TYPE=text XR_CORE_VALIDATION_FILE_NAME="$out/validation.txt" \
TELA_XR_TEST_SCRIPT="$data/xr/$script" TELA_XR_TEST_LOG="$out/log.txt" TELA_XR_TEST_EYE="$out/eye.ppm" \
  "$xvfb" -a -s "-screen 0 1280x800x24" "$tela" --xr --size 640x400 "$@" >out.txt 2>&1
rc=$?
cat out.txt
# the layer writes its file at its first report: none may exist
if [ -s validation.txt ]
then
  echo "FAIL: the OpenXR core validation layer reported:"
  cat validation.txt
  exit 1
fi
grep -q "^Core Validation output type: text" out.txt || { echo "FAIL: the validation layer did not run"; exit 1; }
grep -q "^error" log.txt && { echo "FAIL: the test runtime reports errors"; grep "^error" log.txt; exit 1; }
grep -q "OpenGL errors were reported" out.txt && { echo "FAIL: GL errors"; exit 1; }
# every frame waited for was ended, at exactly the display time the runtime predicted for
# it, in order, and the session was torn down
awk '
$1 == "frame_wait" { predicted[$2] = $4; waits++ }
$1 == "frame_end" {
  ends++
  if (!($2 in predicted) || $4 != predicted[$2]) { print "FAIL: frame " $2 " ended at " $4 ", predicted " predicted[$2]; bad = 1 }
  if ($4 <= last) { print "FAIL: frame " $2 " display time does not increase"; bad = 1 }
  last = $4
  if ($6 > 0) shown++
}
END {
  print waits " frames waited, " ends " ended, " shown " with a projection layer"
  if (ends != waits || ends < 3 || shown < 2) bad = 1
  exit bad
}' log.txt || { echo "FAIL: frame submission"; exit 1; }
for line in "begin session" "destroy session" "destroy instance"
do
  grep -q "^$line\$" log.txt || { echo "FAIL: the runtime saw no '$line'"; exit 1; }
done
]=])

# (without xvfb-run the tests below fail, saying so: build.sh installs it)
if(NOT XVFB_RUN)
  set(XVFB_RUN "xvfb-run-is-missing-install-the-xvfb-package")
endif()

# A scripted session: the lifecycle runs through, frames go out at the predicted times,
# the right controller's trigger grabs the free corner and lifts it 10 cm, the hand
# vibrates while it holds it (amplitude F / (F + 1 N), docs/vr.md), and the left eye shows
# the cloth where the geometry puts it.
set(check [=[
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
grep -q '^xr: session states: IDLE READY SYNCHRONIZED VISIBLE FOCUSED VISIBLE SYNCHRONIZED STOPPING IDLE EXITING$' out.txt ||
  { echo 'FAIL: the session states'; exit 1; }
grep -q '^end session$' log.txt || { echo 'FAIL: tela did not end the session'; exit 1; }
grep -q ' 1 grabs, 1 releases$' out.txt || { echo 'FAIL: not one grab and one release'; exit 1; }
rise=$(sed -n 's/^xr: grab: vertex 80 rose \([^ ]*\) m$/\1/p' out.txt)
awk -v r="$rise" 'BEGIN { exit !(r >= 0.08 && r <= 0.11) }' || { echo "FAIL: corner 80 rose '$rise' m, expected 0.1"; exit 1; }
# (the release reaches the simulation through the device thread: the few frames after
# the trigger lets go may still show the grab)
awk '
/^select right 1/ { held = 1 }
/^select right 0/ { held = 0; released = 1; since = 0 }
/^frame_end/ { since++ }
/^haptic right amplitude/ {
  if (!held && !(released && since <= 6)) { print "FAIL: vibration while not holding: " $0; bad = 1 }
  if ($4 > 0) pulses++
}
/^haptic_stop right/ { if (released) stopped = 1 }
END { print pulses " pulses"; exit bad || pulses < 10 || !stopped }' log.txt || { echo 'FAIL: haptics'; exit 1; }
peak=$(sed -n 's/.*peak amplitude \([^ ]*\) at \([^ ]*\) N$/\1 \2/p' out.txt)
echo "$peak" | awk '{ exit !($1 > 0 && $1 - $2 / ($2 + 1) < 0.002 && $2 / ($2 + 1) - $1 < 0.002) }' ||
  { echo "FAIL: the amplitude '$peak' does not follow F / (F + 1 N)"; exit 1; }
grep -q '^capture ' log.txt || { echo 'FAIL: no eye image'; exit 1; }
"$eye_check" eye.ppm || exit 1
# --record recorded the controller's samples (stage frame): replayed in lock step through
# the stage's mapping, they grab and lift the same corner
"$tela" run "$1" --seconds 4.5 --device replay:hands.rec@0 --calibration "$data/xr/stage-to-world.cal" >replay.txt 2>&1 ||
  { cat replay.txt; exit 1; }
cat replay.txt
dy=$(sed -n 's/^stylus: vertex 80 grabbed at .* moved [^ ]* \([^ ]*\) [^ ]* m$/\1/p' replay.txt)
awk -v dy="$dy" 'BEGIN { exit !(dy >= 0.095 && dy <= 0.105) }' || { echo "FAIL: the replay lifted corner 80 by '$dy' m"; exit 1; }
]=])
tela_add_sh_test(xr_session_grab "xr;render" "${TELA_XR_RUN}${check}"
  "${TELA_XR_RUNTIME_JSON}" "${CMAKE_CURRENT_SOURCE_DIR}/data" "${XVFB_RUN}" $<TARGET_FILE:test_xr_eye>
  grab.script ${CMAKE_CURRENT_SOURCE_DIR}/data/scenes/stylus-corner.ini --record hands.rec)

# The runtime loses the session (LOSS_PENDING): tela stops, tears everything down, says
# so and exits 5.
set(check [=[
[ "$rc" -eq 5 ] || { echo "FAIL: exit $rc, expected 5"; exit 1; }
grep -q 'the runtime lost the session' out.txt || { echo 'FAIL: no message'; exit 1; }
grep -q '^xr: session states: IDLE READY SYNCHRONIZED VISIBLE FOCUSED LOSS_PENDING$' out.txt || { echo 'FAIL: states'; exit 1; }
]=])
tela_add_sh_test(xr_session_lost "xr;render" "${TELA_XR_RUN}${check}"
  "${TELA_XR_RUNTIME_JSON}" "${CMAKE_CURRENT_SOURCE_DIR}/data" "${XVFB_RUN}" $<TARGET_FILE:test_xr_eye>
  loss.script hanging)

# --seconds: tela asks the runtime to end the session (xrRequestExitSession) and follows
# it down through STOPPING to EXITING.
set(check [=[
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
grep -q '^request exit$' log.txt || { echo 'FAIL: tela did not ask to exit'; exit 1; }
grep -q '^end session$' log.txt || { echo 'FAIL: tela did not end the session'; exit 1; }
grep -q '^xr: session states: IDLE READY SYNCHRONIZED VISIBLE FOCUSED VISIBLE SYNCHRONIZED STOPPING IDLE EXITING$' out.txt ||
  { echo 'FAIL: the session states'; exit 1; }
grep -q '^haptic' log.txt && { echo 'FAIL: vibration without a grab'; exit 1; }
exit 0
]=])
tela_add_sh_test(xr_session_request_exit "xr;render" "${TELA_XR_RUN}${check}"
  "${TELA_XR_RUNTIME_JSON}" "${CMAKE_CURRENT_SOURCE_DIR}/data" "${XVFB_RUN}" $<TARGET_FILE:test_xr_eye>
  look.script hanging --seconds 1.5)

# A tracked stylus with the headset: its calibration maps the tracker into the stage
# (tests/data/xr/stylus-stage.cal), tela maps the stage into the world, and the synthetic
# grab script lifts the free corner 10 cm as it does on the desktop.
set(check [=[
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
grep -q ' 1 grabs, 1 releases$' out.txt || { echo 'FAIL: not one grab and one release'; exit 1; }
rise=$(sed -n 's/^xr: grab: vertex 80 rose \([^ ]*\) m$/\1/p' out.txt)
awk -v r="$rise" 'BEGIN { exit !(r >= 0.08 && r <= 0.11) }' || { echo "FAIL: corner 80 rose '$rise' m, expected 0.1"; exit 1; }
grep -q '^haptic' log.txt && { echo 'FAIL: a controller vibrated for the stylus'; exit 1; }
exit 0
]=])
tela_add_sh_test(xr_stylus_in_stage "xr;render;device" "${TELA_XR_RUN}${check}"
  "${TELA_XR_RUNTIME_JSON}" "${CMAKE_CURRENT_SOURCE_DIR}/data" "${XVFB_RUN}" $<TARGET_FILE:test_xr_eye>
  stylus.script ${CMAKE_CURRENT_SOURCE_DIR}/data/scenes/stylus-corner.ini --device synthetic:grab
  --calibration ${CMAKE_CURRENT_SOURCE_DIR}/data/xr/stylus-stage.cal)

# Without a runtime: what is missing, and exit 5; the loader is not even asked.  (The
# user's and the system's configuration folders are replaced by an empty one, so only
# /etc/openxr/1/active_runtime.json, the loader's fixed last place, could still be found:
# on a machine with a runtime installed there, tela must then get past this point.)
tela_add_sh_test(xr_no_runtime "xr;unit" [=[
mkdir -p "$2/empty" || exit 1
env -u XR_RUNTIME_JSON XDG_CONFIG_HOME="$2/empty" XDG_CONFIG_DIRS="$2/empty" "$1" --xr hanging >"$2/out.txt" 2>&1
rc=$?
cat "$2/out.txt"
if [ -e /etc/openxr/1/active_runtime.json ]
then
  grep -q "no OpenXR runtime is installed" "$2/out.txt" && { echo "FAIL: a runtime is installed"; exit 1; }
  exit 0
fi
[ "$rc" -eq 5 ] || { echo "FAIL: exit $rc, expected 5"; exit 1; }
grep -q "tela --xr: no OpenXR runtime is installed: Debian's OpenXR loader found no active runtime (looked for $2/empty/openxr/1/active_runtime.json, $2/empty/openxr/1/active_runtime.json, /etc/openxr/1/active_runtime.json)" "$2/out.txt" ||
  { echo "FAIL: the message"; exit 1; }
]=])
tela_add_exit_test(xr_runtime_json_nowhere LABELS "xr;unit" CODE 5
  MATCH "tela --xr: XR_RUNTIME_JSON points to '/nonexistent/runtime.json', which does not exist"
  ARGS --xr hanging)
set_tests_properties(xr_runtime_json_nowhere PROPERTIES ENVIRONMENT "XR_RUNTIME_JSON=/nonexistent/runtime.json")

# A runtime but no X display: exit 4, as the desktop demo without OpenGL.
tela_add_sh_test(xr_no_display "xr;render" [=[
env -u DISPLAY -u WAYLAND_DISPLAY XR_RUNTIME_JSON="$3" "$1" --xr hanging >"$2.txt" 2>&1
rc=$?
cat "$2.txt"
[ "$rc" -eq 4 ] || { echo "FAIL: exit $rc, expected 4"; exit 1; }
grep -q "tela --xr: cannot open a display" "$2.txt" || { echo "FAIL: the message"; exit 1; }
]=] "${TELA_XR_RUNTIME_JSON}")

# Command-line errors.
tela_add_exit_test(xr_hand_needs_xr LABELS "xr;unit" CODE 2 MATCH "--hand needs --xr" ARGS hanging --hand left)
tela_add_exit_test(xr_bad_hand LABELS "xr;unit" CODE 2 MATCH "--hand: 'middle' is neither left nor right"
  ARGS --xr hanging --hand middle)
tela_add_exit_test(xr_not_headless LABELS "xr;unit" CODE 2 MATCH "--xr shows the scene in a headset"
  ARGS --xr hanging --headless)

# The input focus goes away while a vertex is held (FOCUSED -> VISIBLE): tela lets it go
# there and then (the corner does not follow the hand's further 20 cm), nothing vibrates
# without focus, and the trigger still held away from the cloth grabs nothing when the
# focus comes back.
set(check [=[
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
grep -q '^xr: session states: IDLE READY SYNCHRONIZED VISIBLE FOCUSED VISIBLE FOCUSED VISIBLE SYNCHRONIZED STOPPING IDLE EXITING$' out.txt ||
  { echo 'FAIL: the session states'; exit 1; }
grep -q ' 1 grabs, 1 releases$' out.txt || { echo 'FAIL: not one grab and one release'; exit 1; }
rise=$(sed -n 's/^xr: grab: vertex 80 rose \([^ ]*\) m$/\1/p' out.txt)
awk -v r="$rise" 'BEGIN { exit !(r >= 0.08 && r <= 0.11) }' || { echo "FAIL: corner 80 rose '$rise' m, expected 0.1"; exit 1; }
awk '
/^state VISIBLE/ && focused { unfocused = 1 }
/^state FOCUSED/ { focused = 1; unfocused = 0 }
/^haptic right amplitude/ && unfocused { print "FAIL: vibration without focus: " $0; bad = 1 }
/^haptic right amplitude/ && $10 > 3.05 { print "FAIL: still holding after the focus came back: " $0; bad = 1 }
END { exit bad }' log.txt || exit 1
exit 0
]=])
tela_add_sh_test(xr_session_unfocus "xr;render" "${TELA_XR_RUN}${check}"
  "${TELA_XR_RUNTIME_JSON}" "${CMAKE_CURRENT_SOURCE_DIR}/data" "${XVFB_RUN}" $<TARGET_FILE:test_xr_eye>
  unfocus.script ${CMAKE_CURRENT_SOURCE_DIR}/data/scenes/stylus-corner.ini)

# --hand left: the left controller grabs and vibrates; the right one is not read.
set(check [=[
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
grep -q ' 1 grabs, 1 releases$' out.txt || { echo 'FAIL: not one grab and one release'; exit 1; }
grep -q '^xr: left controller: ' out.txt || { echo 'FAIL: not the left controller'; exit 1; }
rise=$(sed -n 's/^xr: grab: vertex 80 rose \([^ ]*\) m$/\1/p' out.txt)
awk -v r="$rise" 'BEGIN { exit !(r >= 0.08 && r <= 0.11) }' || { echo "FAIL: corner 80 rose '$rise' m, expected 0.1"; exit 1; }
grep -q '^haptic left amplitude' log.txt || { echo 'FAIL: the left hand did not vibrate'; exit 1; }
grep -q '^haptic right' log.txt && { echo 'FAIL: the right hand vibrated'; exit 1; }
exit 0
]=])
tela_add_sh_test(xr_session_left_hand "xr;render" "${TELA_XR_RUN}${check}"
  "${TELA_XR_RUNTIME_JSON}" "${CMAKE_CURRENT_SOURCE_DIR}/data" "${XVFB_RUN}" $<TARGET_FILE:test_xr_eye>
  grab-left.script ${CMAKE_CURRENT_SOURCE_DIR}/data/scenes/stylus-corner.ini --hand left)

# The runtime stops the session and later makes it ready again (a headset taken off and
# put back on): tela ends it, waits while it is idle, begins it again and carries on.
set(check [=[
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
grep -q '^xr: session states: IDLE READY SYNCHRONIZED VISIBLE FOCUSED VISIBLE SYNCHRONIZED STOPPING IDLE READY SYNCHRONIZED VISIBLE FOCUSED VISIBLE SYNCHRONIZED STOPPING IDLE EXITING$' out.txt ||
  { echo 'FAIL: the session states'; exit 1; }
[ "$(grep -c '^begin session$' log.txt)" -eq 2 ] && [ "$(grep -c '^end session$' log.txt)" -eq 2 ] ||
  { echo 'FAIL: not two begins and two ends'; exit 1; }
# frames only while running: none between the first end and the second begin
awk '/^end session$/ { stopped = 1 } /^begin session$/ { stopped = 0 }
     /^frame_wait/ && stopped { print "FAIL: a frame while stopped"; bad = 1 } END { exit bad }' log.txt || exit 1
]=])
tela_add_sh_test(xr_session_pause "xr;render" "${TELA_XR_RUN}${check}"
  "${TELA_XR_RUNTIME_JSON}" "${CMAKE_CURRENT_SOURCE_DIR}/data" "${XVFB_RUN}" $<TARGET_FILE:test_xr_eye>
  pause.script hanging)
