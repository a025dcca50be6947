# The renderer (issue 5) on Mesa's llvmpipe, twice: with DISPLAY unset (SDL's offscreen
# driver, EGL) and, where xvfb-run exists, under Xvfb (GLX), the two paths a headless
# machine and a desktop take.
# app/ finds SDL2, but its imported target is visible only there and below.
if(NOT TARGET PkgConfig::SDL2)
  pkg_check_modules(SDL2 REQUIRED IMPORTED_TARGET sdl2)
endif()
tela_add_test(test_render SOURCES test_render.c LIBS tela_render PkgConfig::SDL2 LABELS render)
set_tests_properties(test_render PROPERTIES ENVIRONMENT_MODIFICATION "DISPLAY=unset:")

find_program(XVFB_RUN xvfb-run)
if(XVFB_RUN)
  add_test(NAME test_render_xvfb
           COMMAND "${XVFB_RUN}" -a -s "-screen 0 640x480x24" $<TARGET_FILE:test_render>)
  set_tests_properties(test_render_xvfb PROPERTIES LABELS render TIMEOUT 600)
endif()

# Under AddressSanitizer: libraries' allocations kept until exit are not tela's leaks.
set_tests_properties(test_render PROPERTIES
  ENVIRONMENT "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp")
if(XVFB_RUN)
  set_tests_properties(test_render_xvfb PROPERTIES
    ENVIRONMENT "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp")
endif()
