# Install the build into a fresh prefix, then move it: every installed file must find the others
# relative to itself. cmake -DBUILD_DIR=... -DWORK=... -DPREFIX=... -P install.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${WORK}/staged"
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}):\n${out}\n${err}")
endif()
file(RENAME "${WORK}/staged" "${PREFIX}")
message(STATUS "installed into ${WORK}/staged, moved to ${PREFIX}")
