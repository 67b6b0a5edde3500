# CMake toolchain file: cross-build the HOST (liblume-metal and the lume-metal tool) for macOS 13
# and later from Linux, with clang-22 and ld64.lld-22, for one architecture, without an Apple SDK.
# The `macos` preset (cmake/LumeMetalHostMachO.cmake) configures the whole tree with it once per
# architecture; by hand:
#
#   .ci/fetch-macos-libc        # once: macOS 13's libc headers and libSystem.tbd, see below
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/darwin/DarwinHost.cmake \
#         -DLUME_METAL_DARWIN_ARCH=arm64 -DLUME_METAL_TESTS=OFF -DLUME_METAL_GUEST=OFF
#
# The guest's toolchain (DarwinCross.cmake, its sibling) is freestanding: the shim and probe declare
# the few functions they use. The host needs a real C library, so (reference/toolchain.md,
# "Corrections and additions (2026-12-06)"):
#   - libc headers: macOS 13's, as Zig 0.11.0 ships them (.ci/fetch-macos-libc puts them in
#     LUME_METAL_MACOS_LIBC), searched instead of the Linux ones (-nostdlibinc keeps only clang's
#     own headers: stddef.h, stdarg.h, ...): the architecture's folder first, then macOS 13's, then
#     those common to every macOS, as Zig orders them.
#   - libSystem: Zig's libSystem.13.tbd, the real export list of macOS 13's libSystem and the
#     libraries it re-exports (LUME_METAL_MACOS_LIBC/lib, searched before the SDK's folders).
#   - CoreFoundation: our own declarations (sdk/System/Library/Frameworks/CoreFoundation.framework:
#     Headers/CoreFoundation.h and CoreFoundation.tbd), found as a system framework (-iframework).
#   - the third-party libraries: their headers and link stubs come from a Linux dependency root
#     (DarwinHostDependencies.cmake, through cmake/LumeMetalDependencies.cmake).
# The sysroot is the guest's (sdk/): SDKSettings.json says 26.0, so clang passes
# `-platform_version macos 13.0 26.0` as with Xcode 26's SDK, where lume-metal's users build it.
#
# Every link of the project's targets uses `-undefined dynamic_lookup`: a symbol that no library
# given to the linker exports does not stop the link of an image at its first miss;
# cmake/darwin/check-host-macho.sh then reports every import of both images that its library does
# not export (and every dynamically looked-up one), for both architectures, and fails the build.
include(${CMAKE_CURRENT_LIST_DIR}/DarwinTarget.cmake)
if(NOT LUME_METAL_MACOS_LIBC)
  if(DEFINED ENV{XDG_CACHE_HOME} AND NOT "$ENV{XDG_CACHE_HOME}" STREQUAL "")
    set(LUME_METAL_MACOS_LIBC "$ENV{XDG_CACHE_HOME}/lume-metal/macos13-libc")
  else()
    set(LUME_METAL_MACOS_LIBC "$ENV{HOME}/.cache/lume-metal/macos13-libc")
  endif()
endif()
set(LUME_METAL_MACOS_LIBC "${LUME_METAL_MACOS_LIBC}" CACHE PATH
  "macOS 13's libc headers and libSystem.tbd (from Zig 0.11.0; .ci/fetch-macos-libc puts them there)")
if(NOT EXISTS "${LUME_METAL_MACOS_LIBC}/SOURCE" OR NOT EXISTS "${LUME_METAL_MACOS_LIBC}/lib/libSystem.tbd")
  message(FATAL_ERROR "lume-metal: macOS 13's libc headers and libSystem.tbd are not in ${LUME_METAL_MACOS_LIBC}.\n"
    "  Fetch them (npm registry, 72 MB download, 8 MB kept): .ci/fetch-macos-libc ${LUME_METAL_MACOS_LIBC}")
endif()
# The host's build flags reach try_compile() projects too (CMake's checks re-read this file there).
set(LUME_METAL_DARWIN_HOST ON)
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES LUME_METAL_MACOS_LIBC)

if(LUME_METAL_DARWIN_ARCH STREQUAL "arm64")
  set(_lm_zig_arch aarch64)
else()
  set(_lm_zig_arch x86_64)
endif()
set(_lm_inc "${LUME_METAL_MACOS_LIBC}/include")
set(CMAKE_C_FLAGS_INIT "-nostdlibinc -isystem ${_lm_inc}/${_lm_zig_arch}-macos.13-none -isystem ${_lm_inc}/any-macos.13-any")
string(APPEND CMAKE_C_FLAGS_INIT " -isystem ${_lm_inc}/any-macos-any -iframework ${_lm_sdk}/System/Library/Frameworks")
# Naming the linker "lld" makes clang pass -arch and -platform_version (from SDKSettings.json).
# -nostdlib: no compiler-rt archive (there is none for Darwin here) and libSystem named below.
set(_lm_link "-fuse-ld=lld -nostdlib -L${LUME_METAL_MACOS_LIBC}/lib")
# -undefined dynamic_lookup (see above) for the project's own targets only, not in CMake's checks
# (try_compile, which takes CMAKE_EXE_LINKER_FLAGS along): there a missing symbol must fail the
# link as on a Mac, or check_function_exists and the like would find everything.
get_property(_lm_in_try_compile GLOBAL PROPERTY IN_TRY_COMPILE)
if(NOT _lm_in_try_compile)
  add_link_options(LINKER:-undefined,dynamic_lookup)
endif()
if(LUME_METAL_DARWIN_ARCH STREQUAL "x86_64")
  string(APPEND _lm_link " -Wl,-adhoc_codesign")
endif()
set(CMAKE_EXE_LINKER_FLAGS_INIT "${_lm_link}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${_lm_link}")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "${_lm_link}")
set(CMAKE_C_STANDARD_LIBRARIES "-lSystem" CACHE STRING "" FORCE)
# Rpaths as on any Mac (DarwinHostRules.cmake says why CMake needs telling). Installing rewrites
# install names and rpaths with install_name_tool, LLVM's here, unless CMAKE_BUILD_WITH_INSTALL_RPATH
# is on (the macos preset turns it on: the images checked are then the linker's, signature included).
set(CMAKE_USER_MAKE_RULES_OVERRIDE_C "${CMAKE_CURRENT_LIST_DIR}/DarwinHostRules.cmake")
find_program(CMAKE_INSTALL_NAME_TOOL NAMES llvm-install-name-tool PATHS /usr/lib/llvm-22/bin /usr/lib/llvm-14/bin
  NO_DEFAULT_PATH REQUIRED)

# Frameworks (CoreFoundation) from our SDK folder; programs from this machine.
set(CMAKE_FIND_ROOT_PATH "${_lm_sdk}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
