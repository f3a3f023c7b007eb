# The git sha and dirty flag of the sources, written to ${XS_BIN}/generated/xs/build_git.cpp. Run at
# configure time (included by xstage_version.cmake) and again at every build (target xs_git_stamp, cmake -P),
# so that a rebuild after a commit or an edit stamps what it built: configure_file rewrites the file only when
# its content changes, so an unchanged tree recompiles nothing. A copy without .git (the GPU machine gets the
# working tree only) reads ".xs-git-sha" ("<sha> <dirty>", written by scripts/device/stamp.sh); a build outside
# git with no stamp reports "unknown".
# "Dirty" means a tracked file outside results/ differs from the commit: result files build nothing (a device call
# may travel with some of them moved aside for size).
# Inputs: XS_SRC (the source tree), XS_BIN (the build tree).
execute_process(COMMAND git rev-parse HEAD WORKING_DIRECTORY ${XS_SRC}
  OUTPUT_VARIABLE XS_GIT_SHA OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _xs_git_rc)
execute_process(COMMAND git status --porcelain --untracked-files=no -- . ":(exclude)results" WORKING_DIRECTORY ${XS_SRC}
  OUTPUT_VARIABLE _xs_git_status OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(_xs_git_status STREQUAL "")
  set(XS_GIT_DIRTY false)
else()
  set(XS_GIT_DIRTY true)
endif()
if(NOT _xs_git_rc EQUAL 0 OR XS_GIT_SHA STREQUAL "")
  set(XS_GIT_SHA "unknown")
  set(XS_GIT_DIRTY false)
  if(EXISTS ${XS_SRC}/.xs-git-sha)
    file(READ ${XS_SRC}/.xs-git-sha _xs_stamp)
    string(STRIP "${_xs_stamp}" _xs_stamp)
    string(REPLACE " " ";" _xs_stamp "${_xs_stamp}")
    list(GET _xs_stamp 0 XS_GIT_SHA)
    list(GET _xs_stamp 1 XS_GIT_DIRTY)
  endif()
endif()
# A copy whose .git is older than its working tree (the GPU machine may receive an older .git with today's files
# on top): a ".xs-git-sha" stamp naming a commit this .git does not have is the truth. Locally the stamped commit
# always exists, so git's own answer stands.
if(NOT XS_GIT_SHA STREQUAL "unknown" AND EXISTS ${XS_SRC}/.xs-git-sha)
  file(READ ${XS_SRC}/.xs-git-sha _xs_stamp)
  string(STRIP "${_xs_stamp}" _xs_stamp)
  string(REPLACE " " ";" _xs_stamp "${_xs_stamp}")
  list(GET _xs_stamp 0 _xs_stamp_sha)
  execute_process(COMMAND git cat-file -e "${_xs_stamp_sha}^{commit}" WORKING_DIRECTORY ${XS_SRC}
    RESULT_VARIABLE _xs_stamp_known OUTPUT_QUIET ERROR_QUIET)
  if(NOT _xs_stamp_known EQUAL 0)
    set(XS_GIT_SHA "${_xs_stamp_sha}")
    list(GET _xs_stamp 1 XS_GIT_DIRTY)
  endif()
endif()
configure_file(${XS_SRC}/cmake/build_git.cpp.in ${XS_BIN}/generated/xs/build_git.cpp @ONLY)
