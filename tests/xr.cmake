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

# Runs `tela --xr ARGS` under Xvfb against the test runtime with the core validation layer
# on: $1 tela, $2 scratch folder, $3 the runtime's manifest, $4 tests/data, $5 xvfb-run,
# $6 test_xr_eye; the script ($SCRIPT, a file under tests/data/xr) and tela's arguments
# follow.  Leaves out.txt (tela's output), log.txt (the runtime's), eye.ppm and rc.
set(TELA_XR_RUN [=[
tela=$1 out=$2 json=$3 data=$4 xvfb=$5 eye_check=$6
script=$7
shift 7
mkdir -p "$out" && cd "$out" || exit 1
rm -f validation.txt log.txt eye.ppm
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
  if (ends != waits || ends < 30 || shown < 25) bad = 1
  exit bad
}' log.txt || { echo "FAIL: frame submission"; exit 1; }
for line in "begin session" "end session" "destroy session" "destroy instance"
do
  grep -q "^$line\$" log.txt || { echo "FAIL: the runtime saw no '$line'"; exit 1; }
done
]=])

# A scripted session: the lifecycle runs through, frames go out at the predicted times,
# the right controller's trigger grabs the free corner and lifts it 10 cm, the hand
# vibrates while it holds it (amplitude F / (F + 1 N), docs/vr.md), and the left eye shows
# the cloth where the geometry puts it.
set(check [=[
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
grep -q '^xr: session states: IDLE READY SYNCHRONIZED VISIBLE FOCUSED VISIBLE SYNCHRONIZED STOPPING IDLE EXITING$' out.txt ||
  { echo 'FAIL: the session states'; exit 1; }
grep -q ' 1 grabs, 1 releases$' out.txt || { echo 'FAIL: not one grab and one release'; exit 1; }
rise=$(sed -n 's/^xr: grab: vertex 80 rose \([^ ]*\) m$/\1/p' out.txt)
awk -v r="$rise" 'BEGIN { exit !(r >= 0.09 && r <= 0.11) }' || { echo "FAIL: corner 80 rose '$rise' m, expected 0.1"; exit 1; }
# (the release reaches the simulation through the device thread: the frame or two after
# the trigger lets go may still show the grab)
awk '
/^select right 1/ { held = 1 }
/^select right 0/ { held = 0; released = 1; since = 0 }
/^frame_end/ { since++ }
/^haptic right amplitude/ {
  if (!held && !(released && since <= 3)) { print "FAIL: vibration while not holding: " $0; bad = 1 }
  if ($4 > 0) pulses++
}
/^haptic_stop right/ { if (released) stopped = 1 }
END { print pulses " pulses"; exit bad || pulses < 10 || !stopped }' log.txt || { echo 'FAIL: haptics'; exit 1; }
peak=$(sed -n 's/.*peak amplitude \([^ ]*\) at \([^ ]*\) N$/\1 \2/p' out.txt)
echo "$peak" | awk '{ exit !($1 > 0 && $1 - $2 / ($2 + 1) < 0.002 && $2 / ($2 + 1) - $1 < 0.002) }' ||
  { echo "FAIL: the amplitude '$peak' does not follow F / (F + 1 N)"; exit 1; }
grep -q '^capture ' log.txt || { echo 'FAIL: no eye image'; exit 1; }
"$eye_check" eye.ppm
]=])
tela_add_sh_test(xr_session_grab "xr;render" "${TELA_XR_RUN}${check}"
  "${TELA_XR_RUNTIME_JSON}" "${CMAKE_CURRENT_SOURCE_DIR}/data" "${XVFB_RUN}" $<TARGET_FILE:test_xr_eye>
  grab.script ${CMAKE_CURRENT_SOURCE_DIR}/data/scenes/stylus-corner.ini)
