# The device core (issue 6): the Polhemus record parser, pol_encode, the synthetic
# scripts, recording and replay.  No hardware and no USB; label "device".
tela_add_test(test_devices SOURCES test_devices.c LIBS tela_devices ${MATH_LIBRARY} LABELS "device;unit")
# The test reaches the private source struct and the synthetic script's pose function.
target_include_directories(test_devices PRIVATE "${PROJECT_SOURCE_DIR}/devices/src")
