# Records the git sha and dirty flag at configure time (re-read at each configure); the result file's meta
# carries them. A build outside git reports "unknown".
execute_process(COMMAND git rev-parse HEAD WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
  OUTPUT_VARIABLE XS_GIT_SHA OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _xs_git_rc)
if(NOT _xs_git_rc EQUAL 0 OR XS_GIT_SHA STREQUAL "")
  set(XS_GIT_SHA "unknown")
endif()
execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
  OUTPUT_VARIABLE _xs_git_status OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(_xs_git_status STREQUAL "")
  set(XS_GIT_DIRTY false)
else()
  set(XS_GIT_DIRTY true)
endif()
configure_file(${CMAKE_SOURCE_DIR}/cmake/build_info.hpp.in ${CMAKE_BINARY_DIR}/generated/xstage/build_info.hpp @ONLY)
