# CMake toolchain file: cross-build the macOS guest (shim dylib and probe) from Linux with
# clang-22 and ld64.lld-22, for one architecture, without an Apple SDK.
#
#   cmake -S guest -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/darwin/DarwinCross.cmake \
#         -DLUME_METAL_DARWIN_ARCH=arm64 -DLUME_METAL_VERSION=0.1.0
#
# The "SDK" is cmake/darwin/sdk: text-based library descriptions (.tbd) for libSystem, libobjc and
# Metal listing only the symbols the guest uses, with the library versions of the macOS 26 SDK, and
# an SDKSettings.json saying "26.0" — from which clang passes `-platform_version macos 13.0 26.0`
# to the linker, exactly as with Xcode's SDK, so LC_BUILD_VERSION records minos 13.0 and sdk 26.0
# (Metal's linked-on-or-after behaviour keys on the sdk). The guest sources declare the functions
# they use themselves, so no header is needed (-nostdinc).
#
# Like an Xcode build: compact unwind information for every function, so each slice has
# __unwind_info (-ffreestanding turns unwind tables off; -funwind-tables turns them back on, and
# unlike -fasynchronous-unwind-tables it does not make clang-22 add DWARF unwind for every arm64
# function, which Xcode's clang does not do); chained fixups (ld64.lld-22's default for macOS 13,
# as ld64's). No -g and no absolute paths reach the output: two builds in different
# directories are byte-identical. arm64 gets ld64.lld's ad-hoc signature by default, x86_64 on
# request (-adhoc_codesign). Used by cmake/LumeMetalGuestMachO.cmake, once per architecture.
include(${CMAKE_CURRENT_LIST_DIR}/DarwinTarget.cmake)

set(CMAKE_C_FLAGS_INIT "-ffreestanding -nostdinc -fno-builtin -funwind-tables")
set(CMAKE_C_FLAGS_RELEASE_INIT "-O2")
# Naming the linker "lld" makes clang pass -arch and -platform_version (from SDKSettings.json).
set(_lm_link "-fuse-ld=lld -nostdlib")
if(LUME_METAL_DARWIN_ARCH STREQUAL "x86_64")
  string(APPEND _lm_link " -Wl,-adhoc_codesign")
endif()
set(CMAKE_EXE_LINKER_FLAGS_INIT "${_lm_link}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${_lm_link}")
set(CMAKE_C_STANDARD_LIBRARIES "-lSystem" CACHE STRING "" FORCE)

set(CMAKE_FIND_ROOT_PATH "${CMAKE_CURRENT_LIST_DIR}/sdk")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
