# Helpers for the guest parts: guest/, tests/guest/, tests/bench/.

# The GNU runtime's Objective-C front end is gcc's: the C compiler itself in a gcc build; in a
# clang build of the tree (the `clang` preset) the gcc on PATH, for the one Objective-C file (the
# fake Metal of the tests): clang does not see gcc's <objc/runtime.h>. An explicit
# CMAKE_OBJC_COMPILER wins.
if(CMAKE_OBJC_COMPILER)
  set(LUME_METAL_GNU_OBJC_COMPILER "${CMAKE_OBJC_COMPILER}")
elseif(CMAKE_C_COMPILER_ID STREQUAL "GNU")
  set(LUME_METAL_GNU_OBJC_COMPILER "${CMAKE_C_COMPILER}")
else()
  find_program(LUME_METAL_GNU_OBJC_COMPILER NAMES gcc)
endif()

# lm_require_gnu_objc(<part>): the GNU Objective-C runtime and gcc's Objective-C front end, which
# the Linux build of the guest (shim, probe, fake Metal) needs. Checked once by compiling and
# linking a two-line Objective-C program.
function(lm_require_gnu_objc part)
  if(LUME_METAL_HAVE_GNU_OBJC)
    return()
  endif()
  set(dir "${CMAKE_BINARY_DIR}/CMakeFiles/lm-objc-check")
  file(MAKE_DIRECTORY "${dir}")
  file(WRITE "${dir}/check.m"
    "#include <objc/runtime.h>\nint main(void) { return objc_lookUpClass(\"NoSuchClass\") != Nil; }\n")
  execute_process(
    COMMAND "${LUME_METAL_GNU_OBJC_COMPILER}" -x objective-c "${dir}/check.m" -lobjc -o "${dir}/check"
    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(STATUS "Objective-C check failed: ${err}")
    _lm_missing("the GNU Objective-C compiler and runtime (gcc -x objective-c, -lobjc)" "${part}"
      "gobjc" "(not needed on macOS: the Apple runtime is used)")
  endif()
  set(LUME_METAL_HAVE_GNU_OBJC ON CACHE INTERNAL "gcc compiles and links Objective-C for the GNU runtime")
endfunction()

# lm_guest_enable_objc(): enable OBJC in the calling directory with gcc (the GNU runtime's front
# end, above), so a clang found first on PATH is not picked up.
macro(lm_guest_enable_objc)
  lm_require_gnu_objc("the fake Metal used by the guest tests")
  if(NOT CMAKE_OBJC_COMPILER)
    set(CMAKE_OBJC_COMPILER "${LUME_METAL_GNU_OBJC_COMPILER}")
  endif()
  enable_language(OBJC)
endmacro()

# lm_guest_without_sanitizers(): drop the LUME_METAL_SANITIZE flags from the calling directory.
# The shim, the probe and the fake Metal are injected into (or loaded by) processes that are not
# built with ASan: an instrumented .so in LD_PRELOAD makes ASan abort ("runtime does not come first
# in initial library list"), and the Lume simulator's guests run them in ordinary sshd sessions.
# So these artifacts are the same in every preset; the shim's code itself is still checked under
# ASan/UBSan (test_guest_inprocess) and TSan (test_guest_threads_tsan), compiled into executables.
macro(lm_guest_without_sanitizers)
  foreach(_lm_prop COMPILE_OPTIONS LINK_OPTIONS)
    get_directory_property(_lm_opts ${_lm_prop})
    list(FILTER _lm_opts EXCLUDE REGEX "^-f(no-)?sanitize|^-fno-omit-frame-pointer$")
    set_directory_properties(PROPERTIES ${_lm_prop} "${_lm_opts}")
  endforeach()
endmacro()
