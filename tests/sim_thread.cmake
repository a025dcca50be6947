# The demo's simulation thread (issue 5): schedule, commands, grab, triple buffer and
# blow-up recovery, without a window.
tela_add_test(test_sim_thread SOURCES test_sim_thread.c LIBS tela_demo_core tela_scenes tela_sim LABELS unit)
target_compile_definitions(test_sim_thread PRIVATE TELA_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data")
