# Runs a program (the lume-metal CLI, or any test program) once and checks its exit code AND its
# output, which CTest's PASS_REGULAR_EXPRESSION cannot do (it ignores the exit code). A CTest
# helper, no shell:
#   cmake -DCLI=<path> -DARGS=<a|b|c> -DEXPECT_EXIT=<n> [-DEXPECT_OUT=<regex>] [-DEXPECT_ERR=<regex>]
#         [-DEXPECT_JSON_OK=ON|OFF] [-DFORBID=<regex, in neither stdout nor stderr>]
#         [-DTIMEOUT=<seconds, default 300>] -P run_cli.cmake
# ARGS uses '|' between arguments because ';' would split the add_test() command line.
string(REPLACE "|" ";" args "${ARGS}")
if(NOT DEFINED TIMEOUT)
  set(TIMEOUT 300) # a hang guard, not a time target (issue 49)
endif()
execute_process(COMMAND ${CLI} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
  TIMEOUT ${TIMEOUT})
set(ctx "${CLI} ${args}\n--- exit ${rc}\n--- stdout\n${out}--- stderr\n${err}")
if(NOT rc STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "expected exit ${EXPECT_EXIT}\n${ctx}")
endif()
if(DEFINED EXPECT_OUT AND NOT out MATCHES "${EXPECT_OUT}")
  message(FATAL_ERROR "stdout does not match '${EXPECT_OUT}'\n${ctx}")
endif()
if(DEFINED EXPECT_ERR AND NOT err MATCHES "${EXPECT_ERR}")
  message(FATAL_ERROR "stderr does not match '${EXPECT_ERR}'\n${ctx}")
endif()
if(NOT "${FORBID}" STREQUAL "" AND ("${out}" MATCHES "${FORBID}" OR "${err}" MATCHES "${FORBID}"))
  message(FATAL_ERROR "the output matches '${FORBID}'\n${ctx}")
endif()
if(DEFINED EXPECT_JSON_OK)
  string(JSON ok ERROR_VARIABLE json_err GET "${out}" ok)
  if(json_err)
    message(FATAL_ERROR "stdout is not one JSON document with \"ok\": ${json_err}\n${ctx}")
  endif()
  string(JSON schema GET "${out}" schema)
  string(JSON command GET "${out}" command)
  if(NOT ok STREQUAL "${EXPECT_JSON_OK}" OR NOT schema EQUAL 2 OR NOT command MATCHES "^profile( |$)")
    message(FATAL_ERROR "expected ok=${EXPECT_JSON_OK}, schema=2, command=profile ...\n${ctx}")
  endif()
endif()
