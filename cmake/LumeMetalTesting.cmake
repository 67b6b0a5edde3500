# lm_add_unit_test(<name> SOURCES ... [LIBS ...] [LABELS ...]): one cmocka executable, one CTest
# test, with the tests' shared helpers (tests/support/lm_test.h) and LM_TEST_CASE's choice of its
# cases (tests/support/lm_test_cases.c).
function(lm_add_unit_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE lm::cmocka lm_test lm_test_cases ${T_LIBS})
  lm_target_warnings(${name})
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "unit;${T_LABELS}")
endfunction()

# The loopback address plan. A test whose guests listen on loopback addresses (the simulator's
# VMs and the SSH tests' guests: real sshd processes, on port 22 of their address) gets a /24 of
# its own, 127.B.N.0/24, so that tests run at once (ctest -j) never meet on an address. Two tests
# on one net would not fail where they meet: the simulator skips an address whose port 22 is
# taken, into the next test's guests, and a guest's host key would then change under another
# test. The nets are handed out in configure order: 127.0.LUME_METAL_NET_FIRST.0/24 to
# the last net of block 0, then nets 1 to 254 of block 1 (127.B.N with B = 1) and so on, up to
# block LUME_METAL_NET_BLOCKS - 1;
# 127.0.0.0/24 (the API's 127.0.0.1, the simulator's default guests from 127.0.0.2) and
# 127.0.1-9 are left for runs by hand. The plan is written to tests/address-plan.txt in the build
# tree; hygiene_address_plan checks the registered tests against it and the sources for
# addresses picked by hand.
set(LUME_METAL_NET_FIRST 10)
set(LUME_METAL_NET_BLOCKS 4)

# lm_loopback_net(<owner> <var> [PAIR]): the next free net "B.N" of the plan for <owner> (a test
# or a target), in <var>: its addresses are 127.B.N.HOST. With PAIR the net after it, B.(N+1), is
# free too (a test with two nets, or the allocation sweep's workers, counts on N and N+1). A plan
# that runs out stops the configure.
function(lm_loopback_net owner var)
  get_property(block GLOBAL PROPERTY LUME_METAL_NET_BLOCK)
  get_property(next GLOBAL PROPERTY LUME_METAL_NET_NEXT)
  if(NOT block)
    set(block 0)
  endif()
  if(NOT next)
    set(next ${LUME_METAL_NET_FIRST})
  endif()
  if(next GREATER 254 OR (ARGV2 STREQUAL "PAIR" AND next EQUAL 254))
    math(EXPR block "${block} + 1")
    set(next 1)
  endif()
  if(NOT block LESS LUME_METAL_NET_BLOCKS)
    get_property(plan GLOBAL PROPERTY LUME_METAL_ADDRESS_PLAN)
    list(LENGTH plan taken)
    message(FATAL_ERROR "lume-metal: the loopback address plan is full: ${owner} needs a /24, and all "
      "${taken} of 127.0.${LUME_METAL_NET_FIRST}.0/24 to 127.${block}.254.0/24 are taken "
      "(LUME_METAL_NET_BLOCKS in cmake/LumeMetalTesting.cmake)")
  endif()
  math(EXPR after "${next} + 1")
  set_property(GLOBAL PROPERTY LUME_METAL_NET_BLOCK ${block})
  set_property(GLOBAL PROPERTY LUME_METAL_NET_NEXT ${after})
  set_property(GLOBAL APPEND PROPERTY LUME_METAL_ADDRESS_PLAN "127.${block}.${next}.0/24 ${owner}")
  set(${var} ${block}.${next} PARENT_SCOPE)
endfunction()

# lm_test_loopback(<test> [NETS 1|2]): nets of the plan for <test> (registered in this
# directory), in its environment as the first guest address of each: LM_ADDRESS_BASE=127.B.N.2
# and, with NETS 2, LM_ADDRESS_BASE_B for a second simulator. The tests' scripts and programs take
# their addresses from there only (lm_test_address() in tests/support/lm_test.h).
function(lm_test_loopback test)
  cmake_parse_arguments(L "" "NETS" "" ${ARGN})
  if(NOT L_NETS)
    set(L_NETS 1)
  endif()
  if(NOT L_NETS MATCHES "^[12]$")
    message(FATAL_ERROR "lm_test_loopback(${test}): NETS is 1 or 2, not '${L_NETS}'")
  endif()
  if(L_NETS EQUAL 2)
    lm_loopback_net(${test} net PAIR)
  else()
    lm_loopback_net(${test} net)
  endif()
  set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT "LM_ADDRESS_BASE=127.${net}.2")
  if(L_NETS EQUAL 2)
    lm_loopback_net(${test} net)
    set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT "LM_ADDRESS_BASE_B=127.${net}.2")
  endif()
endfunction()

# lm_write_address_plan(): the plan as configured, one net and its owner a line.
function(lm_write_address_plan)
  get_property(plan GLOBAL PROPERTY LUME_METAL_ADDRESS_PLAN)
  list(JOIN plan "\n" text)
  file(WRITE ${PROJECT_BINARY_DIR}/tests/address-plan.txt "${text}\n")
endfunction()

# The longest tests start first: a fresh clone has no CTestCostData.txt, and ctest would start
# them in the order they were added (one started late was the whole run's tail). COST: the seconds
# each took in CI (stop 42, 2 CPUs); only the order follows from it. Each test directory whose
# tests are here calls lm_test_costs() at its end (a test's properties are set in its directory).
set(LM_TEST_COSTS
  e2e_alloc_failures_status_sampled=30 e2e_github_action_version=66 e2e_ansible_role=54
  release_reproducible=46 e2e_cancel_rollback_restart=42 e2e_flow_concurrent=40
  e2e_alloc_failures_json_enable_sampled=38 test_sim_api=36 e2e_managers_utm_request_ignored=33
  prefs_cli_sigkill=30 prefs_cli_concurrency=21 e2e_cancel_http_stop=21
  # issue 49's sweeps (alloc_more), scaled from one run at load 14 by status_sampled's (327 s there)
  e2e_alloc_failures_agent_remove_sampled=27 e2e_alloc_failures_agent_install_sampled=17
  e2e_alloc_failures_json_gc_sampled=17 e2e_alloc_failures_agent_list_sampled=15
  e2e_alloc_failures_bench_compare_sampled=14 e2e_alloc_failures_gc_sampled=10)
function(lm_test_costs)
  foreach(cost IN LISTS LM_TEST_COSTS)
    string(REPLACE "=" ";" cost "${cost}")
    list(GET cost 0 name)
    list(GET cost 1 seconds)
    if(TEST ${name})
      set_tests_properties(${name} PROPERTIES COST ${seconds})
    endif()
  endforeach()
endfunction()

# A test's TIMEOUT is a bound on a hang, never a measure of speed (issue 49): at least
# LM_TEST_TIMEOUT_FLOOR seconds, whatever its directory set. A test that takes a minute on an idle
# 2-CPU machine took four to six at load 10 to 20 (2026-12-06: guest_macho_verify went past its
# 120 s while builds ran beside the suite; e2e_ansible_role took 315 s where it took 54).
set(LM_TEST_TIMEOUT_FLOOR 900 CACHE STRING "the least TIMEOUT of any test, in seconds: a hang guard, not a time target")

# lm_test_directory_end(): at the end of each tests/ directory that adds tests (properties are set
# in a test's own directory): the costs above, and the timeout floor.
function(lm_test_directory_end)
  lm_test_costs()
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tests)
    get_test_property(${t} TIMEOUT timeout)
    if(NOT timeout OR timeout LESS LM_TEST_TIMEOUT_FLOOR)
      set_tests_properties(${t} PROPERTIES TIMEOUT ${LM_TEST_TIMEOUT_FLOOR})
    endif()
  endforeach()
endfunction()
