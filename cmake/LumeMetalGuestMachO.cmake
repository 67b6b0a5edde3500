# The Linux -> macOS cross-build of the guest: universal (arm64 + x86_64) LumeMetalShim.dylib and
# metal-capabilities in ${CMAKE_BINARY_DIR}/guest/macos, with a SHA256SUMS file.
#
# guest/CMakeLists.txt is configured once per architecture as its own project with the toolchain
# file cmake/darwin/DarwinCross.cmake (so the cross-build goes through the same CMake code as a
# native macOS build), then llvm-lipo joins the slices. Nothing from this build's flags reaches
# the sub-builds: no sanitizer, no CFLAGS from the environment, no -g.
#
# Targets: guest-macho (part of ALL), guest-verify (runs cmake/LumeMetalGuestVerify.cmake, the
# checks that the CTest test guest_macho_verify also runs).
include(LumeMetalDependencies)
set(_lm_dep_part "the macOS guest cross-build (LUME_METAL_GUEST_MACHO=ON)")
# The release's own LLVM (llvm-config --bindir, cmake/LumeMetalOptions.cmake).
lm_require_program(LUME_METAL_LIPO llvm-lipo "${_lm_dep_part}" "llvm" "llvm" ${LUME_METAL_LLVM_BINDIR})
foreach(_lm_tool otool objdump nm strings)
  string(TOUPPER ${_lm_tool} _lm_var)
  lm_require_program(LUME_METAL_${_lm_var} llvm-${_lm_tool} "${_lm_dep_part}" "llvm" "llvm" ${LUME_METAL_LLVM_BINDIR})
endforeach()
# The compiler and linker of the cross-build are LLVM 22's (cmake/darwin/DarwinCross.cmake).
lm_require_program(LUME_METAL_CLANG_22 clang-22 "${_lm_dep_part}" "clang-22" "llvm")
lm_require_program(LUME_METAL_LLD_22 ld64.lld-22 "${_lm_dep_part}" "lld-22" "lld")

set(_lm_src "${PROJECT_SOURCE_DIR}")
set(LUME_METAL_MACHO_DIR "${CMAKE_BINARY_DIR}/guest/macos" CACHE INTERNAL "Mach-O guest outputs")
set(LUME_METAL_MACHO_SHIM "${LUME_METAL_MACHO_DIR}/LumeMetalShim.dylib" CACHE INTERNAL
  "Universal macOS shim dylib (install name @rpath/LumeMetalShim.dylib)")
set(LUME_METAL_MACHO_PROBE "${LUME_METAL_MACHO_DIR}/metal-capabilities" CACHE INTERNAL
  "Universal macOS probe executable")
set(LUME_METAL_MACHO_SUMS "${LUME_METAL_MACHO_DIR}/SHA256SUMS" CACHE INTERNAL "SHA256SUMS of the Mach-O guest files")

set(_lm_macho_inputs
  ${_lm_src}/guest/CMakeLists.txt ${_lm_src}/guest/guest_runtime.h
  ${LUME_METAL_SHIM_SOURCES} ${_lm_src}/guest/probe/metal_capabilities.c
  ${_lm_src}/guest/probe/exercise.c ${_lm_src}/guest/probe/exercise.h
  ${_lm_src}/include/lume-metal/family_list.h
  ${_lm_src}/include/lume-metal/exercise_list.h
  ${_lm_src}/cmake/darwin/DarwinCross.cmake
  ${_lm_src}/cmake/darwin/sdk/usr/lib/libSystem.tbd
  ${_lm_src}/cmake/darwin/sdk/usr/lib/libobjc.tbd
  ${_lm_src}/cmake/darwin/sdk/System/Library/Frameworks/Metal.framework/Metal.tbd
  ${_lm_src}/cmake/darwin/sdk/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation.tbd
  ${_lm_src}/cmake/darwin/sdk/SDKSettings.json
  ${_lm_src}/cmake/LumeMetalGuest.cmake ${_lm_src}/cmake/LumeMetalWarnings.cmake
  ${_lm_src}/cmake/LumeMetalGuestVerify.cmake)

# Everything the verify script needs to rebuild the same files elsewhere and inspect them.
set(_lm_macho_args
  -DSOURCE_DIR=${_lm_src} -DVERSION=${PROJECT_VERSION}
  -DGENERATOR=${CMAKE_GENERATOR} -DMAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}
  -DLIPO=${LUME_METAL_LIPO} -DOTOOL=${LUME_METAL_OTOOL} -DOBJDUMP=${LUME_METAL_OBJDUMP}
  -DNM=${LUME_METAL_NM} -DSTRINGS=${LUME_METAL_STRINGS}
  -DSDK_DIR=${_lm_src}/cmake/darwin/sdk)

add_custom_command(
  OUTPUT ${LUME_METAL_MACHO_SHIM} ${LUME_METAL_MACHO_PROBE} ${LUME_METAL_MACHO_SUMS}
  COMMAND ${CMAKE_COMMAND} ${_lm_macho_args} -DMODE=build
          -DWORK_DIR=${CMAKE_BINARY_DIR}/guest/macho-work -DOUT_DIR=${LUME_METAL_MACHO_DIR}
          -P ${_lm_src}/cmake/LumeMetalGuestVerify.cmake
  DEPENDS ${_lm_macho_inputs}
  COMMENT "Cross-building the universal macOS guest shim and probe"
  VERBATIM)
add_custom_target(guest-macho ALL
  DEPENDS ${LUME_METAL_MACHO_SHIM} ${LUME_METAL_MACHO_PROBE} ${LUME_METAL_MACHO_SUMS})

set(LUME_METAL_MACHO_VERIFY_COMMAND
  ${CMAKE_COMMAND} ${_lm_macho_args} -DMODE=verify -DOUT_DIR=${LUME_METAL_MACHO_DIR}
  -DWORK_DIR=${CMAKE_BINARY_DIR}/guest/macho-verify/second/build/tree
  -P ${_lm_src}/cmake/LumeMetalGuestVerify.cmake
  CACHE INTERNAL "Command that verifies the Mach-O guest files")
add_custom_target(guest-verify
  COMMAND ${LUME_METAL_MACHO_VERIFY_COMMAND}
  DEPENDS guest-macho
  COMMENT "Verifying the macOS guest files"
  VERBATIM)
