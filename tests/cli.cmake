# Every tests/cli/NAME.sh (lib.sh aside) is a test named NAME: run as
#   sh tests/cli/NAME.sh TELA SCRATCH SOURCE_DIR
# (tests/cli/lib.sh says what it is given).  A line "# labels: a;b" in the script sets its
# ctest labels (default: cli).  It runs with no display (offscreen); a script that wants
# Xvfb starts it itself.
file(GLOB tela_cli_scripts CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/cli/*.sh)
foreach(script ${tela_cli_scripts})
  get_filename_component(name ${script} NAME_WE)
  if(name STREQUAL "lib")
    continue()
  endif()
  set(labels cli)
  file(STRINGS ${script} label_line REGEX "^# labels: ")
  if(label_line)
    string(REGEX REPLACE "^# labels: " "" labels "${label_line}")
    # file(STRINGS) escapes the list's semicolons
    string(REPLACE "\\;" ";" labels "${labels}")
  endif()
  add_test(NAME ${name}
           COMMAND sh ${script} $<TARGET_FILE:tela> "${CMAKE_CURRENT_BINARY_DIR}/cli_out/${name}"
                   ${PROJECT_SOURCE_DIR})
  set_tests_properties(${name} PROPERTIES LABELS "${labels}" TIMEOUT 600
    ENVIRONMENT "LSAN_OPTIONS=suppressions=${CMAKE_CURRENT_LIST_DIR}/lsan.supp"
    ENVIRONMENT_MODIFICATION "DISPLAY=unset:")
endforeach()
