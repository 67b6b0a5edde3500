# guest_activation_schema: every activation record the real shim wrote in test_guest_shim (its
# fixture) against docs/activation-format.schema.json, with tests/support/json-validate.
# cmake -DPYTHON=... -DVALIDATE=... -DSCHEMA=... -DRECORDS=<dir> -P activation_schema.cmake
file(GLOB_RECURSE records "${RECORDS}/*.json")
list(FILTER records INCLUDE REGEX "/[1-9][0-9]*\\.json$")
list(LENGTH records n)
# contents (5 directories), children (8: 5 with inheritance, 1 for each other case), atomic.
if(n LESS 14)
  message(FATAL_ERROR "only ${n} records under ${RECORDS}: did test_guest_shim run?")
endif()
execute_process(COMMAND ${PYTHON} ${VALIDATE} ${SCHEMA} ${records} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "records not valid against ${SCHEMA}")
endif()
message(STATUS "${n} records valid against ${SCHEMA}")
