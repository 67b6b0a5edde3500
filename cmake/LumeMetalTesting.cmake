# lm_add_unit_test(<name> SOURCES ... [LIBS ...] [LABELS ...]): one cmocka executable, one CTest test.
function(lm_add_unit_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE lm::cmocka ${T_LIBS})
  lm_target_warnings(${name})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "unit;${T_LABELS}")
endfunction()
