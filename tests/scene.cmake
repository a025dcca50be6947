# Scene files, the seed folder and `tela run FILE|NAME|DIR` (issue 4).
tela_add_test(test_scene SOURCES test_scene.c LIBS tela_sim tela_scenes LABELS unit)
target_compile_definitions(test_scene PRIVATE TELA_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data")
