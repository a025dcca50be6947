# The interactive demo (issue 5): camera math, and the demo itself headless.
tela_add_test(test_camera SOURCES test_camera.c LIBS tela_demo_core PkgConfig::CGLM LABELS unit)

# The demo through SDL events (offscreen, or under Xvfb when DISPLAY is set).
tela_add_test(test_demo SOURCES test_demo.c LIBS tela_demo LABELS render)
target_compile_definitions(test_demo PRIVATE TELA_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data")

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
