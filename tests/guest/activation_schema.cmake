# guest_activation_schema: every activation record the real shim wrote in test_guest_shim (its
# fixture) against docs/activation-format.schema.json, with tests/support/json-validate.
# cmake -DPYTHON=... -DVALIDATE=... -DSCHEMA=... -DRECORDS=<dir> -P activation_schema.cmake
file(GLOB_RECURSE records "${RECORDS}/*.json")
list(FILTER records INCLUDE REGEX "/[1-9][0-9]*\\.json$")
list(LENGTH records n)
# contents (5 directories), children (5 in each of 4), every call and targets (the last of each), atomic.
if(n LESS 40)
  message(FATAL_ERROR "only ${n} records under ${RECORDS}: did test_guest_shim run?")
endif()
execute_process(COMMAND ${PYTHON} ${VALIDATE} ${SCHEMA} ${records} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "records not valid against ${SCHEMA}")
endif()
message(STATUS "${n} records valid against ${SCHEMA}")
