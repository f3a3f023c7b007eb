# Records the git sha and dirty flag at configure time (re-read at each configure); the result file's meta
# carries them. A build outside git reports "unknown".
execute_process(COMMAND git rev-parse HEAD WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
  OUTPUT_VARIABLE XS_GIT_SHA OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _xs_git_rc)
execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
  OUTPUT_VARIABLE _xs_git_status OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(_xs_git_status STREQUAL "")
  set(XS_GIT_DIRTY false)
else()
  set(XS_GIT_DIRTY true)
endif()
if(NOT _xs_git_rc EQUAL 0 OR XS_GIT_SHA STREQUAL "")
  # A copy without .git (the GPU machine gets the working tree only): scripts/device/stamp.sh writes
  # ".xs-git-sha" with "<sha> <dirty>" beside the sources before the copy is sent.
  set(XS_GIT_SHA "unknown")
  set(XS_GIT_DIRTY false)
  if(EXISTS ${CMAKE_SOURCE_DIR}/.xs-git-sha)
    file(READ ${CMAKE_SOURCE_DIR}/.xs-git-sha _xs_stamp)
    string(STRIP "${_xs_stamp}" _xs_stamp)
    string(REPLACE " " ";" _xs_stamp "${_xs_stamp}")
    list(GET _xs_stamp 0 XS_GIT_SHA)
    list(GET _xs_stamp 1 XS_GIT_DIRTY)
  endif()
endif()
# A copy whose .git is older than its working tree (the GPU machine receives the session's checkout .git
# with today's files on top): a ".xs-git-sha" stamp naming a commit this .git does not have is the truth.
# Locally the stamped commit always exists, so git's own answer stands.
if(NOT XS_GIT_SHA STREQUAL "unknown" AND EXISTS ${CMAKE_SOURCE_DIR}/.xs-git-sha)
  file(READ ${CMAKE_SOURCE_DIR}/.xs-git-sha _xs_stamp)
  string(STRIP "${_xs_stamp}" _xs_stamp)
  string(REPLACE " " ";" _xs_stamp "${_xs_stamp}")
  list(GET _xs_stamp 0 _xs_stamp_sha)
  execute_process(COMMAND git cat-file -e "${_xs_stamp_sha}^{commit}" WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
    RESULT_VARIABLE _xs_stamp_known OUTPUT_QUIET ERROR_QUIET)
  if(NOT _xs_stamp_known EQUAL 0)
    set(XS_GIT_SHA "${_xs_stamp_sha}")
    list(GET _xs_stamp 1 XS_GIT_DIRTY)
  endif()
endif()
configure_file(${CMAKE_SOURCE_DIR}/cmake/build_info.hpp.in ${CMAKE_BINARY_DIR}/generated/xstage/build_info.hpp @ONLY)
