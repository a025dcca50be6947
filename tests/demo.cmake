# The interactive demo (issue 5): camera math, and the demo itself headless.
tela_add_test(test_camera SOURCES test_camera.c LIBS tela_demo_core PkgConfig::CGLM LABELS unit)
