# One fuzz test: RUNS seeded inputs of FUZZER, starting from CORPUS, in a fresh WORK directory
# (new inputs and any crash go there; the committed corpus is only read).
file(GLOB _seeds "${CORPUS}/*")
if(NOT _seeds)
  message(FATAL_ERROR "${CORPUS}: no seed inputs; every fuzz target needs a corpus")
endif()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/new")
execute_process(
  COMMAND "${FUZZER}" -runs=${RUNS} -seed=1 -timeout=10 -print_final_stats=1
    "-artifact_prefix=${WORK}/" "${WORK}/new" "${CORPUS}"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${FUZZER} failed (${rc}); the failing input is in ${WORK}/ "
    "(reproduce: ${FUZZER} ${WORK}/crash-...; then add it to ${CORPUS})")
endif()
