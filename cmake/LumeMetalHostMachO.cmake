# The Linux -> macOS cross-build of the host (LUME_METAL_HOST_MACHO, the `macos` preset):
# liblume-metal.1.dylib and lume-metal as Mach-O for arm64 and x86_64, with the project's own flags
# and -Werror, compiling every __APPLE__ path and CMake's if(APPLE) branches, then checked.
#
# The whole tree is configured once per architecture as its own build (ExternalProject) with the
# toolchain file cmake/darwin/DarwinHost.cmake, exactly as on a Mac save for the toolchain: the
# host only (no guest, no tests: they need the Linux simulator), Release as Homebrew builds it
# (Formula/lume-metal.rb, std_cmake_args), installed into a prefix of its own. Then
# cmake/darwin/check-host-macho.sh checks both installed trees (every import resolved, exactly
# the public API exported) and joins them into universal files with llvm-lipo:
#
#   build-macos/macos/<arch>/          the build of one architecture
#   build-macos/macos/<arch>-prefix/   its installed tree (lib/liblume-metal.1.dylib, bin/lume-metal, include/)
#   build-macos/macos/universal/       lib/liblume-metal.1.dylib and bin/lume-metal, arm64 + x86_64
#
# Inputs (cache variables, passed on to both builds): LUME_METAL_MACOS_LIBC (macOS 13's libc
# headers and libSystem.tbd: .ci/fetch-macos-libc), the dependency root,
# LUME_METAL_DARWIN_DEPS_ROOT / _INCLUDE / _LIB (cmake/darwin/DarwinHostDependencies.cmake), and,
# when set, LUME_METAL_CURL_LIBRARY_NAME and LUME_METAL_HOMEBREW_PREFIX (the dependencies' install
# names; by default Homebrew's prefix on each architecture).
include(ExternalProject)
include(LumeMetalDependencies)
set(_lm_part "the macOS host cross-build (LUME_METAL_HOST_MACHO=ON, preset macos)")
lm_require_program(LUME_METAL_CLANG_22 clang-22 "${_lm_part}" "clang-22" "llvm")
lm_require_program(LUME_METAL_LLD_22 ld64.lld-22 "${_lm_part}" "lld-22" "lld")
# llvm-readtapi (export lists of .tbd files and dylibs) is new in LLVM 18: LLVM 22's tools.
lm_require_program(LUME_METAL_READTAPI_22 llvm-readtapi-22 "${_lm_part}" "llvm-22" "llvm")
lm_require_program(LUME_METAL_JQ jq "${_lm_part}" "jq" "jq")
# The checks use LLVM 22's tools from one folder (clang, llvm-nm, -otool, -objdump, -readtapi, -lipo).
get_filename_component(_lm_llvm_22_bin "${LUME_METAL_READTAPI_22}" REALPATH)
get_filename_component(_lm_llvm_22_bin "${_lm_llvm_22_bin}" DIRECTORY)

if(DEFINED ENV{XDG_CACHE_HOME} AND NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
  set(_lm_libc_default "$ENV{XDG_CACHE_HOME}/lume-metal/macos13-libc")
else()
  set(_lm_libc_default "$ENV{HOME}/.cache/lume-metal/macos13-libc")
endif()
set(LUME_METAL_MACOS_LIBC "${_lm_libc_default}" CACHE PATH
  "macOS 13's libc headers and libSystem.tbd (from Zig 0.11.0; .ci/fetch-macos-libc puts them there)")
if(NOT EXISTS "${LUME_METAL_MACOS_LIBC}/SOURCE" OR NOT EXISTS "${LUME_METAL_MACOS_LIBC}/lib/libSystem.tbd")
  message(FATAL_ERROR "lume-metal: ${_lm_part} needs macOS 13's libc headers and libSystem.tbd, "
    "not found in ${LUME_METAL_MACOS_LIBC} (LUME_METAL_MACOS_LIBC). Fetch them (npm registry, as .ci/install-deps does):\n"
    "  .ci/fetch-macos-libc ${LUME_METAL_MACOS_LIBC}")
endif()

lm_darwin_deps_check()

# The toolchain builds for macOS 13, whose headers and libSystem it has; LUME_METAL_CURL_LIBRARY_NAME
# (the preset sets it as the Formula does) goes to both builds.
if(NOT CMAKE_OSX_DEPLOYMENT_TARGET VERSION_EQUAL 13.0)
  message(FATAL_ERROR "lume-metal: ${_lm_part} builds for macOS 13.0, the headers and libSystem it has, "
    "not CMAKE_OSX_DEPLOYMENT_TARGET=${CMAKE_OSX_DEPLOYMENT_TARGET}")
endif()
set(_lm_pass "")
if(LUME_METAL_CURL_LIBRARY_NAME)
  list(APPEND _lm_pass -DLUME_METAL_CURL_LIBRARY_NAME:STRING=${LUME_METAL_CURL_LIBRARY_NAME})
endif()
if(LUME_METAL_HOMEBREW_PREFIX)
  list(APPEND _lm_pass -DLUME_METAL_HOMEBREW_PREFIX:PATH=${LUME_METAL_HOMEBREW_PREFIX})
endif()

message(STATUS "lume-metal: macOS host cross-build (arm64, x86_64; dependency headers and exports from "
  "${LM_DARWIN_DEPS_INCLUDE} and ${LM_DARWIN_DEPS_LIB}): no tests are built, they need the Linux "
  "simulator; the build checks the Mach-O images instead (cmake/darwin/check-host-macho.sh)")

set(_lm_macos ${CMAKE_BINARY_DIR}/macos)
set(_lm_slices "")
set(_lm_depends "")
foreach(arch arm64 x86_64)
  ExternalProject_Add(host-macho-${arch}
    SOURCE_DIR ${PROJECT_SOURCE_DIR}
    BINARY_DIR ${_lm_macos}/${arch}
    PREFIX ${_lm_macos}/ep/${arch}
    INSTALL_DIR ${_lm_macos}/${arch}-prefix
    CMAKE_CACHE_ARGS
      -DCMAKE_TOOLCHAIN_FILE:FILEPATH=${PROJECT_SOURCE_DIR}/cmake/darwin/DarwinHost.cmake
      -DLUME_METAL_DARWIN_ARCH:STRING=${arch}
      -DLUME_METAL_MACOS_LIBC:PATH=${LUME_METAL_MACOS_LIBC}
      -DLUME_METAL_DARWIN_DEPS_INCLUDE:STRING=${LM_DARWIN_DEPS_INCLUDE}
      -DLUME_METAL_DARWIN_DEPS_LIB:PATH=${LM_DARWIN_DEPS_LIB}
      -DCMAKE_BUILD_TYPE:STRING=Release
      -DCMAKE_INSTALL_PREFIX:PATH=<INSTALL_DIR>
      # The images checked are the linker's own: installing copies them, rewriting nothing.
      -DCMAKE_BUILD_WITH_INSTALL_RPATH:BOOL=ON
      -DLUME_METAL_HOST:BOOL=ON -DLUME_METAL_GUEST:BOOL=OFF -DLUME_METAL_GUEST_MACHO:BOOL=OFF
      -DLUME_METAL_TESTS:BOOL=OFF -DLUME_METAL_BENCHMARKS:BOOL=OFF -DLUME_METAL_FUZZ:BOOL=OFF
      -DLUME_METAL_SANITIZE:BOOL=OFF -DLUME_METAL_HOST_MACHO:BOOL=OFF
      ${_lm_pass}
    # Every build of this tree builds both again (make decides what changed in them).
    BUILD_ALWAYS ON
    INSTALL_COMMAND ${CMAKE_COMMAND} --install <BINARY_DIR>)
  list(APPEND _lm_slices "${arch}=${_lm_macos}/${arch}-prefix=${_lm_macos}/${arch}/darwin-deps/lib")
  list(APPEND _lm_depends host-macho-${arch})
endforeach()

add_custom_target(host-macho-check ALL
  COMMAND bash ${PROJECT_SOURCE_DIR}/cmake/darwin/check-host-macho.sh ${_lm_llvm_22_bin}
          ${LUME_METAL_MACOS_LIBC} ${PROJECT_SOURCE_DIR}/cmake/darwin/sdk ${_lm_macos}/universal ${_lm_slices}
  DEPENDS ${_lm_depends}
  COMMENT "Checking the macOS host images (imports, exports) and making universal files"
  VERBATIM)
