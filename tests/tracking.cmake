# tracking.cmake: calibration, the calibration file, clutch, pose history, one-euro filter
# and the pointer's freeze and recovery (tracking/).
tela_add_test(test_tracking SOURCES test_tracking.c LIBS tela_tracking LABELS unit)
target_compile_definitions(test_tracking PRIVATE TRK_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data/tracking")
