# Issue 8: head-mounted viewing through OpenXR, against a test runtime (tests/xr_runtime.c),
# with Debian's OpenXR core validation layer on.  Label xr.
#
# The runtime is a test fixture: a module library in the test build tree, found by the
# loader only through the manifest written next to it (XR_RUNTIME_JSON); nothing links
# it and nothing installs it.
pkg_check_modules(XR_TEST_OPENXR REQUIRED IMPORTED_TARGET openxr)
find_package(OpenGL REQUIRED COMPONENTS OpenGL GLX)
find_package(Threads REQUIRED)
add_library(tela_xr_test_runtime MODULE xr_runtime.c)
target_link_libraries(tela_xr_test_runtime PRIVATE PkgConfig::XR_TEST_OPENXR OpenGL::GL OpenGL::GLX ${MATH_LIBRARY} Threads::Threads)
set_target_properties(tela_xr_test_runtime PROPERTIES C_VISIBILITY_PRESET hidden PREFIX "lib")
set(TELA_XR_RUNTIME_JSON "${CMAKE_CURRENT_BINARY_DIR}/xr_test_runtime.json")
file(GENERATE OUTPUT "${TELA_XR_RUNTIME_JSON}" CONTENT "{
    \"file_format_version\": \"1.0.0\",
    \"runtime\": {
        \"name\": \"tela test runtime\",
        \"library_path\": \"$<TARGET_FILE:tela_xr_test_runtime>\"
    }
}
")
