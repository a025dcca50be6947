# The Polhemus USB driver (devices/src/polhemus_usb.c) against an emulated PATRIOT:
# umockdev answers the usbdevfs ioctls of unmodified libusb (tests/polhemus_fake.c).
# umockdev is a declared dependency (build.sh), so a missing one fails the configure
# step instead of skipping the test.
pkg_check_modules(UMOCKDEV REQUIRED IMPORTED_TARGET umockdev-1.0)
# The test re-executes itself under this wrapper (it sets LD_PRELOAD).
find_program(UMOCKDEV_WRAPPER umockdev-wrapper REQUIRED)

tela_add_test(test_polhemus_usb SOURCES test_polhemus_usb.c polhemus_fake.c
              LIBS tela_devices PkgConfig::UMOCKDEV ${MATH_LIBRARY} LABELS "device")
