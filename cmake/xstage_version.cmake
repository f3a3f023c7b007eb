# Build facts for result-file meta. Configure-time ones (version, compilers, build type) go to
# generated/xs/build_info.hpp; the git sha and dirty flag to generated/xs/build_git.cpp, re-stamped at
# every build by the target xs_git_stamp (cmake/xstage_git_stamp.cmake), so a rebuild without reconfiguring
# never stamps an older commit. xs_common compiles build_git.cpp.
set(XS_SRC ${CMAKE_SOURCE_DIR})
set(XS_BIN ${CMAKE_BINARY_DIR})
include(${CMAKE_SOURCE_DIR}/cmake/xstage_git_stamp.cmake)
configure_file(${CMAKE_SOURCE_DIR}/cmake/build_info.hpp.in ${CMAKE_BINARY_DIR}/generated/xs/build_info.hpp @ONLY)
add_custom_target(xs_git_stamp
  COMMAND ${CMAKE_COMMAND} -DXS_SRC=${CMAKE_SOURCE_DIR} -DXS_BIN=${CMAKE_BINARY_DIR}
          -P ${CMAKE_SOURCE_DIR}/cmake/xstage_git_stamp.cmake
  BYPRODUCTS ${CMAKE_BINARY_DIR}/generated/xs/build_git.cpp
  COMMENT "Stamping the git sha and dirty flag"
  VERBATIM)
