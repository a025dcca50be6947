# The Polhemus USB driver (devices/src/polhemus_usb.c) against an emulated PATRIOT:
# umockdev answers the usbdevfs ioctls of unmodified libusb (tests/polhemus_fake.c).
# umockdev is a declared dependency (build.sh), so a missing one fails the configure
# step instead of skipping the test.
pkg_check_modules(UMOCKDEV REQUIRED IMPORTED_TARGET umockdev-1.0)
# The test re-executes itself under this wrapper (it sets LD_PRELOAD).
find_program(UMOCKDEV_WRAPPER umockdev-wrapper REQUIRED)

# The last case is the whole chain of `tela run --device polhemus`: the lock-step feed
# (app/stylus_feed.c, in tela_demo_core), the tracker, the stylus and a scene's world; the
# PATRIOT plays the synthetic script (dev_synthetic_pose, private to devices/src).
tela_add_test(test_polhemus_usb SOURCES test_polhemus_usb.c polhemus_fake.c
              LIBS tela_devices tela_demo_core tela_scenes tela_sim PkgConfig::UMOCKDEV ${MATH_LIBRARY}
              LABELS "device")
target_include_directories(test_polhemus_usb PRIVATE "${PROJECT_SOURCE_DIR}/devices/src")
target_compile_definitions(test_polhemus_usb PRIVATE TELA_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data")
