# Run at every build (cmake -P), not at configure time, so that the version names the
# commit actually built: writes OUT, touching it only when the text changes so that an
# unchanged version recompiles nothing.  Inputs: SOURCE_DIR, VERSION, OUT.
set(describe "")
# .git is a folder in a clone and a file in a worktree; a tarball has neither
if(EXISTS "${SOURCE_DIR}/.git")
  find_program(GIT_EXECUTABLE git)
  if(GIT_EXECUTABLE)
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${SOURCE_DIR}" describe --always --dirty
                    OUTPUT_VARIABLE describe OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE git_result ERROR_QUIET)
    if(NOT git_result EQUAL 0)
      set(describe "")
    endif()
  endif()
endif()
if(describe)
  set(text "${VERSION} (git ${describe})")
else()
  set(text "${VERSION}")
endif()
file(CONFIGURE OUTPUT "${OUT}" CONTENT "#define TELA_VERSION_TEXT \"${text}\"\n" @ONLY)
