# Issue 7: the GPU integrator on whatever OpenGL 4.3 context the machine gives (Mesa's
# llvmpipe in CI, through SDL's offscreen driver, EGL).  A test skips (exit 77) only when
# no 4.3 context can be created at all.
if(NOT TARGET PkgConfig::SDL2)
  pkg_check_modules(SDL2 REQUIRED IMPORTED_TARGET sdl2)
endif()
tela_add_test(test_gpu SOURCES test_gpu.c LIBS tela_gpu tela_demo PkgConfig::SDL2 LABELS gpu)
set_tests_properties(test_gpu PROPERTIES SKIP_RETURN_CODE 77
  ENVIRONMENT "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp"
  ENVIRONMENT_MODIFICATION "DISPLAY=unset:")
