# One place that knows which parts are built.
option(LUME_METAL_HOST  "Build the host library and the lume-metal CLI" ON)
option(LUME_METAL_GUEST "Build the guest shim and probe for this machine (GNU Objective-C runtime on Linux, Metal on macOS)" ON)
option(LUME_METAL_TESTS "Build the tests and register them with CTest" ON)
option(LUME_METAL_BENCHMARKS "Build the benchmark targets (run them with the 'bench' target)" ON)

# Nothing is skipped silently. A CI run (CI=true in the environment at configure time, as .ci/run
# and GitHub Actions set it) must build and test every part: one that cannot be built here is a
# configure error. Elsewhere such a part, and any part turned off on purpose, becomes a registered
# test of the same name that reports itself skipped with the reason (tests/CMakeLists.txt).
set(LUME_METAL_CI OFF)
if("$ENV{CI}" MATCHES "^(1|[Tt][Rr][Uu][Ee]|[Yy][Ee][Ss]|[Oo][Nn])$")
  set(LUME_METAL_CI ON)
endif()

# lm_part_skipped(<test name> <reason> [CHOSEN]): the part that test stands for is not built.
# CHOSEN: turned off on purpose, or meaningless on this system (never an error, even in CI).
function(lm_part_skipped name reason)
  cmake_parse_arguments(P "CHOSEN" "" "" ${ARGN})
  if(LUME_METAL_CI AND NOT P_CHOSEN)
    message(FATAL_ERROR "lume-metal: ${name} cannot be built here: ${reason}\n"
      "  (CI=true: every part must be built and tested; unset CI to build the rest and see it as a skipped test)")
  endif()
  if(NOT LUME_METAL_TESTS)
    message(STATUS "lume-metal: ${name} is not built: ${reason}")
    return() # no tests, nothing to register
  endif()
  message(WARNING "lume-metal: ${name} is not built: ${reason}. It is registered as a skipped test.")
  set_property(GLOBAL APPEND PROPERTY LUME_METAL_SKIPPED_TESTS "${name}")
  set_property(GLOBAL PROPERTY LUME_METAL_SKIPPED_REASON_${name} "${reason}")
endfunction()

# The Mach-O cross-build is on by default on Linux when clang-22, ld64.lld-22 and llvm-lipo are
# present (cmake/darwin/DarwinCross.cmake says why LLVM 22).
set(_lm_macho_default OFF)
set(_lm_macho_tools OFF)
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  # llvm-lipo and llvm-otool come from the release's own LLVM (Debian's `llvm` package: 14 on
  # Debian 12, 19 on Debian 13), whose version no file here names: Debian links llvm-config into
  # /usr/bin but neither of those two, so llvm-config --bindir says where they are.
  find_program(LUME_METAL_LLVM_CONFIG NAMES llvm-config)
  if(LUME_METAL_LLVM_CONFIG AND NOT LUME_METAL_LLVM_BINDIR)
    execute_process(COMMAND ${LUME_METAL_LLVM_CONFIG} --bindir OUTPUT_VARIABLE _lm_llvm_bindir
      OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _lm_llvm_rc)
    if(_lm_llvm_rc EQUAL 0 AND IS_DIRECTORY "${_lm_llvm_bindir}")
      set(LUME_METAL_LLVM_BINDIR "${_lm_llvm_bindir}" CACHE PATH "The LLVM tools (lipo, otool) of the Mach-O cross-build")
    endif()
  endif()
  find_program(LUME_METAL_DARWIN_CLANG NAMES clang PATHS /usr/lib/llvm-22/bin NO_DEFAULT_PATH)
  find_program(LUME_METAL_DARWIN_LD64 NAMES ld64.lld PATHS /usr/lib/llvm-22/bin NO_DEFAULT_PATH)
  find_program(LUME_METAL_LIPO NAMES llvm-lipo PATHS ${LUME_METAL_LLVM_BINDIR})
  # EXISTS, not just set: a path given on the command line is kept in the cache as it is.
  if(EXISTS "${LUME_METAL_DARWIN_CLANG}" AND EXISTS "${LUME_METAL_DARWIN_LD64}" AND EXISTS "${LUME_METAL_LIPO}")
    set(_lm_macho_default ON)
    set(_lm_macho_tools ON)
  endif()
endif()
option(LUME_METAL_GUEST_MACHO "Cross-build the universal macOS guest shim and probe (needs clang-22, lld-22, llvm)" ${_lm_macho_default})
if(NOT LUME_METAL_GUEST_MACHO)
  if(NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")
    lm_part_skipped(guest_macho_verify "the Mach-O cross-build is for Linux hosts (a Mac builds the guest natively)" CHOSEN)
  elseif(NOT _lm_macho_tools)
    lm_part_skipped(guest_macho_verify "the Mach-O cross-build needs clang-22, ld64.lld-22 and llvm-lipo, not found (Debian/Ubuntu: sudo apt-get install clang-22 lld-22 llvm)")
  else()
    lm_part_skipped(guest_macho_verify "LUME_METAL_GUEST_MACHO is OFF" CHOSEN)
  endif()
endif()

# The host library and tool cross-built for macOS (arm64 + x86_64 Mach-O) and checked, from Linux:
# the `macos` preset (cmake/LumeMetalHostMachO.cmake). Off by default: it builds the host twice more.
option(LUME_METAL_HOST_MACHO "Cross-build the host library and tool for macOS and check them (the macos preset; needs clang-22, lld-22, llvm-22, jq and .ci/fetch-macos-libc)" OFF)

option(LUME_METAL_SANITIZE "Build everything with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
if(LUME_METAL_SANITIZE)
  # float-cast-overflow is not part of "undefined" in GCC: a double out of an integer's range
  # converted to it (a JSON number such as 1e300) is undefined behaviour all the same.
  add_compile_options(-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all
    -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined,float-cast-overflow)
endif()

# libFuzzer targets for every parser of outside input (tests/fuzz, docs/testing.md). Needs clang:
# everything is built with coverage for libFuzzer, ASan and UBSan (the `fuzz` preset).
option(LUME_METAL_FUZZ "Build the libFuzzer targets in tests/fuzz and register short runs with CTest (needs clang)" OFF)
if(LUME_METAL_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "lume-metal: LUME_METAL_FUZZ needs clang (libFuzzer), not ${CMAKE_C_COMPILER_ID}: "
      "configure with -DCMAKE_C_COMPILER=clang or use the `fuzz` preset "
      "(Debian/Ubuntu: sudo apt-get install clang libclang-rt-dev)")
  endif()
  if(NOT LUME_METAL_HOST)
    message(FATAL_ERROR "lume-metal: LUME_METAL_FUZZ needs LUME_METAL_HOST (the targets call the host library)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
    -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
