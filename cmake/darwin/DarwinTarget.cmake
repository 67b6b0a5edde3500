# What both macOS cross-builds (the guest's DarwinCross.cmake and the host's DarwinHost.cmake)
# share: Darwin 22 (macOS 13) for LUME_METAL_DARWIN_ARCH (arm64 or x86_64; arm64 by default),
# clang-22 and ld64.lld-22, macOS 13 as the deployment target, and cmake/darwin/sdk as the sysroot
# (_lm_sdk). Included by those toolchain files only.
set(CMAKE_SYSTEM_NAME Darwin)
set(CMAKE_SYSTEM_VERSION 22.0) # Darwin 22: macOS 13
if(NOT LUME_METAL_DARWIN_ARCH)
  set(LUME_METAL_DARWIN_ARCH arm64)
endif()
if(NOT LUME_METAL_DARWIN_ARCH MATCHES "^(arm64|x86_64)$")
  message(FATAL_ERROR "LUME_METAL_DARWIN_ARCH must be arm64 or x86_64, not ${LUME_METAL_DARWIN_ARCH}")
endif()
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES LUME_METAL_DARWIN_ARCH)
set(CMAKE_SYSTEM_PROCESSOR ${LUME_METAL_DARWIN_ARCH})

# clang finds ld64.lld next to itself (/usr/lib/llvm-22/bin), so the linker is lld-22's.
find_program(LUME_METAL_DARWIN_CC NAMES clang PATHS /usr/lib/llvm-22/bin NO_DEFAULT_PATH REQUIRED)
find_program(LUME_METAL_DARWIN_LD NAMES ld64.lld PATHS /usr/lib/llvm-22/bin NO_DEFAULT_PATH REQUIRED)
set(CMAKE_C_COMPILER ${LUME_METAL_DARWIN_CC})
set(CMAKE_C_COMPILER_TARGET ${LUME_METAL_DARWIN_ARCH}-apple-macos13)
set(CMAKE_OSX_ARCHITECTURES ${LUME_METAL_DARWIN_ARCH} CACHE STRING "" FORCE)
set(CMAKE_OSX_DEPLOYMENT_TARGET 13.0 CACHE STRING "" FORCE)
set(_lm_sdk "${CMAKE_CURRENT_LIST_DIR}/sdk")
set(CMAKE_OSX_SYSROOT "${_lm_sdk}" CACHE PATH "" FORCE)
