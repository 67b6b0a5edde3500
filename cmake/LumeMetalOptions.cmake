# One place that knows which parts are built.
option(LUME_METAL_HOST  "Build the host library and the lume-metal CLI" ON)
option(LUME_METAL_GUEST "Build the guest shim and probe for this machine (GNU Objective-C runtime on Linux, Metal on macOS)" ON)
option(LUME_METAL_TESTS "Build the tests and register them with CTest" ON)
option(LUME_METAL_BENCHMARKS "Build the benchmark targets (run them with the 'bench' target)" ON)

# The Mach-O cross-build is on by default on Linux when clang-22, ld64.lld-22 and llvm-lipo are
# present (cmake/darwin/DarwinCross.cmake says why LLVM 22).
set(_lm_macho_default OFF)
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  find_program(LUME_METAL_DARWIN_CLANG NAMES clang PATHS /usr/lib/llvm-22/bin NO_DEFAULT_PATH)
  find_program(LUME_METAL_DARWIN_LD64 NAMES ld64.lld PATHS /usr/lib/llvm-22/bin NO_DEFAULT_PATH)
  find_program(LUME_METAL_LIPO NAMES llvm-lipo-14 llvm-lipo PATHS /usr/lib/llvm-14/bin)
  if(LUME_METAL_DARWIN_CLANG AND LUME_METAL_DARWIN_LD64 AND LUME_METAL_LIPO)
    set(_lm_macho_default ON)
  endif()
endif()
option(LUME_METAL_GUEST_MACHO "Cross-build the universal macOS guest shim and probe (needs clang-22, lld-22, llvm-14)" ${_lm_macho_default})

option(LUME_METAL_SANITIZE "Build everything with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
if(LUME_METAL_SANITIZE)
  # float-cast-overflow is not part of "undefined" in GCC: a double out of an integer's range
  # converted to it (a JSON number such as 1e300) is undefined behaviour all the same.
  add_compile_options(-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all
    -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined,float-cast-overflow)
endif()
