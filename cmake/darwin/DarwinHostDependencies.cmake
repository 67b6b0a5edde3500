# The host's third-party libraries in its macOS cross-build (cmake/darwin/DarwinHost.cmake; used by
# cmake/LumeMetalDependencies.cmake in place of pkg-config and find_package, which would hand a
# Mach-O link this machine's ELF libraries).
#
# Headers and export lists come from a Linux dependency root: by default this machine's own
# (/usr/include, /usr/lib/<multiarch>, Debian's -dev packages); LUME_METAL_DARWIN_DEPS_ROOT points
# it at another, e.g. a folder where Debian 13's -dev packages were unpacked with `dpkg -x`, or
# LUME_METAL_DARWIN_DEPS_INCLUDE (a list) and LUME_METAL_DARWIN_DEPS_LIB name the folders.
#   - Headers: only each library's own headers are seen (a folder of links, darwin-deps/include),
#     never the root's C library headers, which would hide what macOS's lack.
#   - Link stubs: generated at build time by make-stub.sh from the dynamic symbol table of the
#     library's Linux build in the root, under Homebrew's install name on macOS
#     (PREFIX/opt/<formula>/lib/<file>; PREFIX: LUME_METAL_HOMEBREW_PREFIX, by default Homebrew's
#     own, /opt/homebrew on Apple silicon and /usr/local on Intel). libcurl is opened at its first
#     use (host/lib/vm/curl_lib.c): headers only.
#
# This file defines the cache variables and functions; it can be included by the Linux build that
# drives the cross-build (cmake/LumeMetalHostMachO.cmake) to resolve the same defaults.
if(CMAKE_LIBRARY_ARCHITECTURE AND NOT CMAKE_SYSTEM_NAME STREQUAL "Darwin")
  set(_lm_multiarch "${CMAKE_LIBRARY_ARCHITECTURE}")
else()
  set(_lm_multiarch "${CMAKE_HOST_SYSTEM_PROCESSOR}-linux-gnu")
endif()
set(LUME_METAL_DARWIN_DEPS_ROOT "/" CACHE PATH
  "Linux root whose usr/include and usr/lib/<multiarch> give the macOS cross-build's dependency headers and export lists")
set(LUME_METAL_DARWIN_DEPS_INCLUDE "" CACHE STRING
  "Dependency header folders (a list); empty: ROOT/usr/include;ROOT/usr/include/${_lm_multiarch}")
set(LUME_METAL_DARWIN_DEPS_LIB "" CACHE PATH
  "Folder of the dependencies' Linux shared libraries (lib*.so); empty: ROOT/usr/lib/${_lm_multiarch}")
string(REGEX REPLACE "/+$" "" _lm_root "${LUME_METAL_DARWIN_DEPS_ROOT}")
if(LUME_METAL_DARWIN_DEPS_INCLUDE)
  set(LM_DARWIN_DEPS_INCLUDE "${LUME_METAL_DARWIN_DEPS_INCLUDE}")
else()
  set(LM_DARWIN_DEPS_INCLUDE "${_lm_root}/usr/include" "${_lm_root}/usr/include/${_lm_multiarch}")
endif()
if(LUME_METAL_DARWIN_DEPS_LIB)
  set(LM_DARWIN_DEPS_LIB "${LUME_METAL_DARWIN_DEPS_LIB}")
else()
  set(LM_DARWIN_DEPS_LIB "${_lm_root}/usr/lib/${_lm_multiarch}")
endif()

# What each dependency is, keyed by its pkg-config module (libcurl, found by CMake's FindCURL: curl):
# the headers it installs (files or folders under an include folder), its Linux library, and its
# Homebrew formula and file.
set(_lm_dep_libplist-2.0 HEADERS plist SO libplist-2.0.so DYLIB libplist/lib/libplist-2.0.4.dylib)
set(_lm_dep_libssh2 HEADERS libssh2.h libssh2_sftp.h libssh2_publickey.h SO libssh2.so DYLIB libssh2/lib/libssh2.1.dylib)
set(_lm_dep_libcrypto HEADERS openssl SO libcrypto.so DYLIB openssl@3/lib/libcrypto.3.dylib)
set(_lm_dep_libcjson HEADERS cjson SO libcjson.so DYLIB cjson/lib/libcjson.1.dylib)
set(_lm_dep_curl HEADERS curl)

# lm_darwin_deps_check(): every dependency's headers and Linux library are in the root, or a
# configure error that says what the root lacks.
function(lm_darwin_deps_check)
  set(lacking "")
  foreach(key libplist-2.0 libssh2 libcrypto libcjson curl)
    cmake_parse_arguments(D "" "SO;DYLIB" "HEADERS" ${_lm_dep_${key}})
    foreach(entry IN LISTS D_HEADERS)
      set(found OFF)
      foreach(dir IN LISTS LM_DARWIN_DEPS_INCLUDE)
        if(EXISTS "${dir}/${entry}")
          set(found ON)
        endif()
      endforeach()
      if(NOT found)
        list(APPEND lacking "${entry} (a header)")
      endif()
    endforeach()
    if(D_SO AND NOT EXISTS "${LM_DARWIN_DEPS_LIB}/${D_SO}")
      list(APPEND lacking "${LM_DARWIN_DEPS_LIB}/${D_SO}")
    endif()
  endforeach()
  if(lacking)
    list(JOIN lacking "\n    " lacking)
    list(JOIN LM_DARWIN_DEPS_INCLUDE " " include)
    message(FATAL_ERROR "lume-metal: the dependency root of the macOS cross-build "
      "(LUME_METAL_DARWIN_DEPS_ROOT=${LUME_METAL_DARWIN_DEPS_ROOT}; headers from ${include}, "
      "libraries from ${LM_DARWIN_DEPS_LIB}) lacks:\n    ${lacking}\n"
      "  This machine's: sudo apt-get install libplist-dev libssh2-1-dev libssl-dev libcjson-dev libcurl4-openssl-dev\n"
      "  Another Debian release's, unpacked: .ci/fetch-debian-deps DIR, then -DLUME_METAL_DARWIN_DEPS_ROOT=DIR/root")
  endif()
endfunction()

if(NOT LUME_METAL_DARWIN_HOST)
  return() # the rest is the cross-build's own
endif()

find_program(LUME_METAL_DARWIN_NM NAMES llvm-nm PATHS /usr/lib/llvm-22/bin /usr/lib/llvm-14/bin NO_DEFAULT_PATH)
if(NOT LUME_METAL_DARWIN_NM)
  find_program(LUME_METAL_DARWIN_NM NAMES nm REQUIRED)
endif()
set(LM_DARWIN_DEPS_DIR "${CMAKE_BINARY_DIR}/darwin-deps")
# The header links are made anew by every configure: the root may have changed. When it has, what
# was found in the other root's headers (lm_check_declared's cached LM_<DEP>_HAVE_* results) is
# forgotten and checked again.
file(REMOVE_RECURSE "${LM_DARWIN_DEPS_DIR}/include")
set(_lm_deps_key "${LM_DARWIN_DEPS_INCLUDE}|${LM_DARWIN_DEPS_LIB}")
if(DEFINED LM_DARWIN_DEPS_KEY AND NOT LM_DARWIN_DEPS_KEY STREQUAL _lm_deps_key)
  get_cmake_property(_lm_vars CACHE_VARIABLES)
  foreach(_lm_var IN LISTS _lm_vars)
    if(_lm_var MATCHES "^LM_[A-Z0-9]+_HAVE_")
      unset(${_lm_var} CACHE)
    endif()
  endforeach()
endif()
set(LM_DARWIN_DEPS_KEY "${_lm_deps_key}" CACHE INTERNAL "The dependency root the cached checks were made against")

# Links darwin-deps/include/<entry> to each file of <entry> in the include folders (the first one
# that has it wins), so that a header split between folders (OpenSSL's openssl/configuration.h is
# in the multiarch folder) is whole.
function(_lm_darwin_headers key)
  cmake_parse_arguments(D "" "SO;DYLIB" "HEADERS" ${_lm_dep_${key}})
  foreach(entry IN LISTS D_HEADERS)
    set(found OFF)
    foreach(dir IN LISTS LM_DARWIN_DEPS_INCLUDE)
      if(IS_DIRECTORY "${dir}/${entry}")
        file(GLOB_RECURSE files RELATIVE "${dir}" "${dir}/${entry}/*")
      elseif(EXISTS "${dir}/${entry}")
        set(files "${entry}")
      else()
        continue()
      endif()
      set(found ON)
      foreach(f IN LISTS files)
        set(link "${LM_DARWIN_DEPS_DIR}/include/${f}")
        if(NOT IS_SYMLINK "${link}")
          get_filename_component(parent "${link}" DIRECTORY)
          file(MAKE_DIRECTORY "${parent}")
          file(CREATE_LINK "${dir}/${f}" "${link}" SYMBOLIC)
        endif()
      endforeach()
    endforeach()
    if(NOT found)
      message(FATAL_ERROR "lume-metal: ${entry} (${key}) is in none of the dependency header folders "
        "${LM_DARWIN_DEPS_INCLUDE} (LUME_METAL_DARWIN_DEPS_ROOT=${LUME_METAL_DARWIN_DEPS_ROOT}, "
        "LUME_METAL_DARWIN_DEPS_INCLUDE). Debian/Ubuntu: sudo apt-get install libplist-dev libssh2-1-dev "
        "libssl-dev libcjson-dev libcurl4-openssl-dev")
    endif()
  endforeach()
endfunction()

# lm_darwin_dependency(<target> <key>): <target> (PkgConfig::lm_plist, CURL::libcurl: the names
# pkg-config and FindCURL give), an imported INTERFACE library with the dependency's headers and
# (unless headers only) its link stub, generated at build time by a target of its own.
function(lm_darwin_dependency target key)
  if(NOT DEFINED _lm_dep_${key})
    message(FATAL_ERROR "lume-metal: no macOS cross-build description for dependency ${key} (cmake/darwin/DarwinHostDependencies.cmake)")
  endif()
  cmake_parse_arguments(D "" "SO;DYLIB" "HEADERS" ${_lm_dep_${key}})
  _lm_darwin_headers(${key})
  add_library(${target} INTERFACE IMPORTED GLOBAL)
  target_include_directories(${target} SYSTEM INTERFACE "${LM_DARWIN_DEPS_DIR}/include")
  if(NOT D_SO)
    return()
  endif()
  set(brew "${LUME_METAL_HOMEBREW_PREFIX}")
  if(NOT brew AND LUME_METAL_DARWIN_ARCH STREQUAL "x86_64")
    set(brew /usr/local)
  elseif(NOT brew)
    set(brew /opt/homebrew)
  endif()
  set(so "${LM_DARWIN_DEPS_LIB}/${D_SO}")
  if(NOT EXISTS "${so}")
    message(FATAL_ERROR "lume-metal: ${so} (${key}), whose exports make the macOS link stub, does not exist "
      "(LUME_METAL_DARWIN_DEPS_ROOT=${LUME_METAL_DARWIN_DEPS_ROOT}, LUME_METAL_DARWIN_DEPS_LIB).")
  endif()
  get_filename_component(so_real "${so}" REALPATH)
  get_filename_component(name "${D_DYLIB}" NAME)
  string(REGEX REPLACE "\\.dylib$" "" name "${name}")
  set(stub "${LM_DARWIN_DEPS_DIR}/lib/${name}.tbd")
  # What the stub is made from, rewritten only when it changes (another root, another prefix), so
  # that make remakes the stub then (it compares times, not commands).
  set(inputs "${so_real}\n${brew}/opt/${D_DYLIB}\n")
  set(inputs_file "${LM_DARWIN_DEPS_DIR}/lib/${name}.inputs")
  set(old "")
  if(EXISTS "${inputs_file}")
    file(READ "${inputs_file}" old)
  endif()
  if(NOT old STREQUAL inputs)
    file(WRITE "${inputs_file}" "${inputs}")
  endif()
  add_custom_command(OUTPUT "${stub}"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${LM_DARWIN_DEPS_DIR}/lib"
    COMMAND bash "${PROJECT_SOURCE_DIR}/cmake/darwin/make-stub.sh" "${LUME_METAL_DARWIN_NM}" "${so}"
            "${brew}/opt/${D_DYLIB}" "${stub}"
    DEPENDS "${so_real}" "${inputs_file}" "${PROJECT_SOURCE_DIR}/cmake/darwin/make-stub.sh"
    COMMENT "macOS link stub ${name}.tbd from the exports of ${so}"
    VERBATIM)
  string(MAKE_C_IDENTIFIER "lm_darwin_stub_${name}" stub_target)
  add_custom_target(${stub_target} DEPENDS "${stub}")
  target_link_libraries(${target} INTERFACE "${stub}")
  # Followed in the imported target's place by every target that links it.
  add_dependencies(${target} ${stub_target})
  set_property(GLOBAL APPEND PROPERTY LM_DARWIN_STUBS "${stub}")
endfunction()
