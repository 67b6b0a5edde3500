# CMake toolchain file: cross-build the macOS guest (shim dylib and probe) from Linux with
# clang-14 and ld64.lld, for one architecture, without an Apple SDK.
#
#   cmake -S guest -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/darwin/DarwinCross.cmake \
#         -DLUME_METAL_DARWIN_ARCH=arm64 -DLUME_METAL_VERSION=0.1.0
#
# The "SDK" is cmake/darwin/sdk: text-based library descriptions (.tbd) for libSystem, libobjc and Metal listing only
# the symbols the guest uses; the guest sources declare those functions themselves, so no header
# is needed (-nostdinc). No -g and no absolute paths reach the output: two builds in different
# directories are byte-identical. arm64 gets ld64.lld's ad-hoc signature by default, x86_64 on
# request (-adhoc_codesign). Used by cmake/LumeMetalGuestMachO.cmake, once per architecture.
set(CMAKE_SYSTEM_NAME Darwin)
set(CMAKE_SYSTEM_VERSION 22.0)
if(NOT LUME_METAL_DARWIN_ARCH)
  set(LUME_METAL_DARWIN_ARCH arm64)
endif()
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES LUME_METAL_DARWIN_ARCH)
set(CMAKE_SYSTEM_PROCESSOR ${LUME_METAL_DARWIN_ARCH})

find_program(LUME_METAL_DARWIN_CC NAMES clang-14 clang PATHS /usr/lib/llvm-14/bin REQUIRED)
find_program(LUME_METAL_DARWIN_LD NAMES ld64.lld PATHS /usr/lib/llvm-14/bin REQUIRED)
set(CMAKE_C_COMPILER ${LUME_METAL_DARWIN_CC})
set(CMAKE_C_COMPILER_TARGET ${LUME_METAL_DARWIN_ARCH}-apple-macos13)
set(CMAKE_OSX_ARCHITECTURES ${LUME_METAL_DARWIN_ARCH} CACHE STRING "" FORCE)
set(CMAKE_OSX_DEPLOYMENT_TARGET 13.0 CACHE STRING "" FORCE)
set(CMAKE_OSX_SYSROOT "${CMAKE_CURRENT_LIST_DIR}/sdk" CACHE PATH "" FORCE)

set(CMAKE_C_FLAGS_INIT "-ffreestanding -nostdinc -fno-builtin")
set(CMAKE_C_FLAGS_RELEASE_INIT "-O2")
# clang finds ld64.lld next to itself; naming it "lld" also makes it pass -platform_version.
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
