# The interactive demo (issue 5): camera math, and the demo itself headless.
tela_add_test(test_camera SOURCES test_camera.c LIBS tela_demo_core PkgConfig::CGLM LABELS unit)
# The event queue behind the window's message line and the headless runs' stderr.
tela_add_test(test_events SOURCES test_events.c LIBS tela_demo_core LABELS unit)

# The watchdog that ends a run making no progress (in child processes).
tela_add_test(test_stop SOURCES test_stop.c LIBS tela_demo_core LABELS unit)

# The demo's recent-scenes file: order, cap, missing and corrupt files.
tela_add_test(test_recent_scenes SOURCES test_recent_scenes.c LIBS tela_demo_core LABELS unit)

# Scenes dropped on the window, opened and saved from the panel (offscreen).
tela_add_test(test_demo_files SOURCES test_demo_files.c LIBS tela_demo tela_scenes LABELS render)
target_compile_definitions(test_demo_files PRIVATE TELA_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data"
                           TELA_SCENES_DIR="${PROJECT_SOURCE_DIR}/scenes")
set_tests_properties(test_demo_files PROPERTIES ENVIRONMENT_MODIFICATION "DISPLAY=unset:"
                     ENVIRONMENT "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp")

# The home view fitted to every built-in scene, the pointer's size, and which debug labels
# and lines are drawn (pure math, no window).
tela_add_test(test_framing SOURCES test_framing.c LIBS tela_demo_core PkgConfig::CGLM LABELS unit)

# The demo through SDL events (offscreen, or under Xvfb when DISPLAY is set).
tela_add_test(test_demo SOURCES test_demo.c LIBS tela_demo LABELS render)
target_compile_definitions(test_demo PRIVATE TELA_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data")

# The same file's tracked-stylus cases (issue 6): the window's device thread drives the
# grab in real time from synthetic:grab and from the recorded session, offscreen; with
# synthetic:grab+orbit a second station moves the camera (or, at station 0, nothing).
tela_add_test(test_demo_device SOURCES test_demo.c LIBS tela_demo LABELS "render;device")
target_compile_definitions(test_demo_device PRIVATE TELA_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data" TELA_DEMO_DEVICE=1)
# dev_synthetic_pose: the camera station's case predicts the orbit script's poses.
target_include_directories(test_demo_device PRIVATE "${PROJECT_SOURCE_DIR}/devices/src")
set_tests_properties(test_demo_device PROPERTIES ENVIRONMENT_MODIFICATION "DISPLAY=unset:")

# With no display, `tela` runs headless: a scripted grab, a PNG and a summary that says so.
tela_add_sh_test(demo_headless_no_display render [=[
mkdir -p "$2" && cd "$2" || exit 1
env -u DISPLAY -u WAYLAND_DISPLAY "$1" hanging --seconds 1 >out.txt 2>&1
rc=$?
cat out.txt
[ "$rc" -eq 0 ] || { echo "FAIL: exit $rc"; exit 1; }
grep -q "no display found, so the demo ran headless" out.txt || { echo "FAIL: no headless notice"; exit 1; }
grep -q "picture: tela-hanging.png (960x600)" out.txt || { echo "FAIL: no picture line"; exit 1; }
grep -q "scripted grab: vertex" out.txt || { echo "FAIL: no grab"; exit 1; }
[ "$(head -c 8 tela-hanging.png | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || { echo "FAIL: not a PNG"; exit 1; }
]=])

# The demo's panel (Dear ImGui): GL errors, which clicks it claims, its edits reaching the
# simulation, H and F1, and a scene switch in the same window.
# Offscreen (DISPLAY unset, EGL) and, where xvfb-run exists, under Xvfb (GLX).
tela_add_test(test_panel SOURCES test_panel.c LIBS tela_demo LABELS render)
target_compile_definitions(test_panel PRIVATE TELA_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data")
set_tests_properties(test_panel PROPERTIES ENVIRONMENT_MODIFICATION "DISPLAY=unset:")
find_program(XVFB_RUN xvfb-run)
if(XVFB_RUN)
  add_test(NAME test_panel_xvfb COMMAND "${XVFB_RUN}" -a -s "-screen 0 1280x800x24" $<TARGET_FILE:test_panel>)
  set_tests_properties(test_panel_xvfb PROPERTIES LABELS render TIMEOUT 600)
endif()
# Under AddressSanitizer: what system libraries keep until exit is not tela's leak.
foreach(t test_demo test_demo_device test_panel test_panel_xvfb)
  if(TEST ${t})
    set_tests_properties(${t} PROPERTIES ENVIRONMENT "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp")
  endif()
endforeach()

# --panel puts the panel into the headless picture (a different image from the plain one);
# --no-panel is accepted too.
tela_add_sh_test(demo_headless_panel render [=[
mkdir -p "$2" && cd "$2" || exit 1
"$1" hanging --headless --seconds 0.3 --out plain.png >plain.txt 2>&1 || { cat plain.txt; exit 1; }
"$1" hanging --headless --seconds 0.3 --panel --out panel.png >panel.txt 2>&1 || { cat panel.txt; exit 1; }
"$1" hanging --headless --seconds 0.3 --no-panel --out no-panel.png >no-panel.txt 2>&1 || { cat no-panel.txt; exit 1; }
cat panel.txt
grep -q "OpenGL reported" panel.txt && { echo "FAIL: GL errors with the panel"; exit 1; }
cmp -s plain.png no-panel.png || { echo "FAIL: --no-panel changed the headless picture"; exit 1; }
cmp -s plain.png panel.png && { echo "FAIL: --panel did not change the headless picture"; exit 1; }
exit 0
]=])

# --camera-station: a station 1..16 or 0, and only with --device.
tela_add_cli_test(demo_camera_station_needs_device ARGS hanging --camera-station 2
  PASS_REGEX "--camera-station need --device" LABELS "render;device")
tela_add_cli_test(demo_camera_station_range ARGS hanging --device synthetic:grab+orbit --camera-station 17
  PASS_REGEX "--camera-station: '17' is not a station 1..16, or 0 for none" LABELS "render;device")
