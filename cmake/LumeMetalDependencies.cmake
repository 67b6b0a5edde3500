# Dependencies are found the ordinary way. A part whose dependency is missing stops the configure
# with a message that names what to install on Debian/Ubuntu and with Homebrew.
# In the host's macOS cross-build (cmake/darwin/DarwinHost.cmake sets LUME_METAL_DARWIN_HOST) each
# one is instead a target of the same name with headers and a link stub from a Linux dependency
# root (cmake/darwin/DarwinHostDependencies.cmake); the checks of what its headers declare run
# the same.
find_package(PkgConfig)
if(LUME_METAL_DARWIN_HOST OR LUME_METAL_HOST_MACHO)
  include(${CMAKE_CURRENT_LIST_DIR}/darwin/DarwinHostDependencies.cmake)
endif()

function(_lm_missing what part debian brew)
  message(FATAL_ERROR
    "lume-metal: ${what} is required to build ${part} but was not found.\n"
    "  Debian/Ubuntu: sudo apt-get install ${debian}\n"
    "  macOS (Homebrew): brew install ${brew}\n"
    "Or turn the part off (see cmake/LumeMetalOptions.cmake).")
endfunction()

# Homebrew's keg-only formulas are not on pkg-config's path outside `brew install`'s own build
# environment (shared/reference/toolchain.md): openssl@3, whose libcrypto the host and libssh2's
# own .pc need. A from-source build on a Mac adds its pkgconfig folder, found from `brew --prefix`
# (or LUME_METAL_HOMEBREW_PREFIX), so that it finds what `brew install openssl@3` installed.
if(APPLE)
  set(LUME_METAL_HOMEBREW_PREFIX "" CACHE PATH "Homebrew's prefix (default: what `brew --prefix` says)")
  set(_lm_brew_prefix "${LUME_METAL_HOMEBREW_PREFIX}")
  if(NOT _lm_brew_prefix)
    find_program(LUME_METAL_BREW brew PATHS /opt/homebrew/bin /usr/local/bin)
    if(LUME_METAL_BREW)
      execute_process(COMMAND ${LUME_METAL_BREW} --prefix OUTPUT_VARIABLE _lm_brew_prefix
        OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    endif()
  endif()
  foreach(keg openssl@3)
    set(_lm_keg_pc "${_lm_brew_prefix}/opt/${keg}/lib/pkgconfig")
    if(_lm_brew_prefix AND IS_DIRECTORY "${_lm_keg_pc}" AND NOT "$ENV{PKG_CONFIG_PATH}" MATCHES "opt/${keg}/")
      message(STATUS "lume-metal: Homebrew's keg-only ${keg}: ${_lm_keg_pc} added to PKG_CONFIG_PATH")
      if("$ENV{PKG_CONFIG_PATH}" STREQUAL "")
        set(ENV{PKG_CONFIG_PATH} "${_lm_keg_pc}")
      else()
        set(ENV{PKG_CONFIG_PATH} "$ENV{PKG_CONFIG_PATH}:${_lm_keg_pc}")
      endif()
    endif()
  endforeach()
endif()

# The packages that provide a pkg-config module a dependency's own .pc requires, for a message
# that names the one really missing: "<module>|<Debian/Ubuntu>|<Homebrew>".
set(_LM_PC_PROVIDERS "libcrypto|libssl-dev|openssl@3" "libssl|libssl-dev|openssl@3"
  "openssl|libssl-dev|openssl@3" "zlib|zlib1g-dev|zlib")

# lm_require_pkg(<target-alias> <pkg-config module> <part> <debian package> <brew formula>)
# When the module is there but one its .pc requires is not (libssh2.pc asks for libcrypto and
# zlib), the message names that one: asking to install what is installed helps nobody.
function(lm_require_pkg alias module part debian brew)
  if(TARGET ${alias})
    return()
  endif()
  if(LUME_METAL_DARWIN_HOST)
    lm_darwin_dependency(PkgConfig::${alias} ${module})
    set(${alias}_FOUND TRUE)
  elseif(NOT PKG_CONFIG_FOUND)
    _lm_missing("pkg-config" "${part}" "pkg-config" "pkg-config")
  else()
    pkg_check_modules(${alias} QUIET IMPORTED_TARGET GLOBAL ${module})
  endif()
  if(NOT ${alias}_FOUND)
    execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --print-errors --exists ${module}
      OUTPUT_QUIET ERROR_VARIABLE why)
    if(why MATCHES "Package '([^']+)', required by '[^']+', not found")
      set(missing "${CMAKE_MATCH_1}")
      set(debian "(the package that provides ${missing}.pc)")
      set(brew "(the formula that provides ${missing}.pc)")
      foreach(entry IN LISTS _LM_PC_PROVIDERS)
        string(REPLACE "|" ";" entry "${entry}")
        list(GET entry 0 m)
        if(m STREQUAL missing)
          list(GET entry 1 debian)
          list(GET entry 2 brew)
        endif()
      endforeach()
      if(brew STREQUAL "openssl@3")
        set(brew "openssl@3 (keg-only: if it is installed, configure with -DLUME_METAL_HOMEBREW_PREFIX=$(brew --prefix))")
      endif()
      _lm_missing("${missing} (pkg-config), which ${module} requires," "${part}" "${debian}" "${brew}")
    endif()
    _lm_missing("${module} (pkg-config)" "${part}" "${debian}" "${brew}")
  endif()
  add_library(${alias} ALIAS PkgConfig::${alias})
  if(module STREQUAL "libplist-2.0")
    _lm_plist_api_checks(PkgConfig::${alias})
  endif()
endfunction()

# What a dependency's headers declare, decided at configure time by compiling against them (never
# guessed from a version number): the declaration is the fact the code depends on. Compile only
# (a static-library try_compile): a cross build has nothing to run and links against stubs.
# lm_check_declared(<var> <header> FUNCTION <name> <target>): a function (check_symbol_exists);
# lm_check_declared(<var> <header> EXPRESSION <C expression> <target>): an enum constant or a
# call's form, which check_symbol_exists cannot take (it takes the symbol's address).
function(lm_check_declared var header kind symbol target)
  include(CheckSymbolExists)
  include(CheckCSourceCompiles)
  get_target_property(inc ${target} INTERFACE_INCLUDE_DIRECTORIES)
  # A result is cached with the headers it was decided on: when they change (another pkg-config
  # path, another release's headers in the same build folder) it is decided again, never carried
  # over to headers that may not declare the same.
  if(NOT "${inc}|${CMAKE_C_FLAGS}" STREQUAL "${${var}_DECIDED_ON}")
    unset(${var} CACHE)
  endif()
  set(${var}_DECIDED_ON "${inc}|${CMAKE_C_FLAGS}" CACHE INTERNAL "the headers ${var} was decided on")
  set(CMAKE_REQUIRED_INCLUDES ${inc})
  set(CMAKE_REQUIRED_QUIET ON)
  set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
  if(kind STREQUAL "FUNCTION")
    check_symbol_exists(${symbol} "${header}" ${var})
  else()
    check_c_source_compiles("#include <${header}>\nint lm_check(void);\nint lm_check(void) { return (int)(${symbol}); }\nint main(void) { return lm_check(); }" ${var})
  endif()
  if(${var})
    set(${var} 1 PARENT_SCOPE)
  else()
    set(${var} 0 PARENT_SCOPE)
  endif()
endfunction()

# libplist 2.2 to 2.7 (common/deps/lm_plist_api.h says what changed): the switches travel with the
# lm_plist target, with the header that uses them.
function(_lm_plist_api_checks target)
  lm_check_declared(LM_PLIST_HAVE_MEM_FREE plist/plist.h FUNCTION plist_mem_free ${target})
  lm_check_declared(LM_PLIST_HAVE_UNIX_DATE plist/plist.h FUNCTION plist_get_unix_date_val ${target})
  lm_check_declared(LM_PLIST_HAVE_FORMAT_ARG plist/plist.h EXPRESSION "plist_from_memory((const char *)0, 0u, (plist_t *)0, (plist_format_t *)0) == PLIST_ERR_SUCCESS" ${target})
  message(STATUS "lume-metal: libplist declares plist_mem_free: ${LM_PLIST_HAVE_MEM_FREE}, "
    "plist_get_unix_date_val: ${LM_PLIST_HAVE_UNIX_DATE}, plist_from_memory with its format: ${LM_PLIST_HAVE_FORMAT_ARG}")
  set_property(TARGET ${target} APPEND PROPERTY INTERFACE_COMPILE_DEFINITIONS
    LM_PLIST_HAVE_MEM_FREE=${LM_PLIST_HAVE_MEM_FREE} LM_PLIST_HAVE_UNIX_DATE=${LM_PLIST_HAVE_UNIX_DATE}
    LM_PLIST_HAVE_FORMAT_ARG=${LM_PLIST_HAVE_FORMAT_ARG})
  set_property(TARGET ${target} APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${PROJECT_SOURCE_DIR}/common/deps")
endfunction()

# cJSON through pkg-config like the others: Debian's libcjson-dev and Homebrew's cjson both ship
# libcjson.pc, and unlike cJSON's CMake package (whose paths are absolute) it follows
# PKG_CONFIG_SYSROOT_DIR, so the host can be compiled against another release's headers
# (the deps-newest preset).
function(lm_require_cjson part)
  if(TARGET lm::cjson)
    return()
  endif()
  lm_require_pkg(lm_cjson libcjson "${part}" "libcjson-dev" "cjson")
  add_library(lm::cjson ALIAS PkgConfig::lm_cjson)
endfunction()

function(lm_require_curl part)
  if(TARGET CURL::libcurl)
    return()
  endif()
  if(LUME_METAL_DARWIN_HOST) # headers only: it is opened at first use, never linked
    lm_darwin_dependency(CURL::libcurl curl)
    return()
  endif()
  find_package(CURL QUIET)
  if(NOT CURL_FOUND)
    _lm_missing("libcurl" "${part}" "libcurl4-openssl-dev" "curl")
  endif()
endfunction()

# The host library loads libcurl when it first needs it (host/lib/vm/curl_lib.c): it is built
# against libcurl's headers (lm_curl_headers) and opens the library by the name the dynamic linker
# would have looked for, its soname: libcurl's ABI has been 4 since 2006 (libcurl.so.4 on ELF
# systems, libcurl.4.dylib on macOS). The found library is checked to be that one.
# On macOS the name is the system's own library by its full path, /usr/lib/libcurl.4.dylib:
# dlopen(3) searches a bare leaf name in $DYLD_LIBRARY_PATH, the current directory and
# /usr/local/lib before /usr/lib (Apple's dlopen(3)), so a bare name could load whatever libcurl a
# directory offers. Set LUME_METAL_CURL_LIBRARY_NAME to load another one (a Homebrew curl).
function(lm_curl_headers_target)
  if(TARGET lm_curl_headers)
    return()
  endif()
  if(APPLE)
    set(default "/usr/lib/libcurl.4.dylib")
  else()
    set(default "libcurl.so.4")
  endif()
  set(LUME_METAL_CURL_LIBRARY_NAME "${default}" CACHE STRING "libcurl's soname, which the host library opens at its first use")
  get_target_property(loc CURL::libcurl LOCATION)
  if(loc AND EXISTS "${loc}" AND NOT APPLE)
    get_filename_component(real "${loc}" REALPATH)
    get_filename_component(real_name "${real}" NAME)
    string(FIND "${real_name}" "${LUME_METAL_CURL_LIBRARY_NAME}" at)
    if(NOT at EQUAL 0)
      message(FATAL_ERROR "lume-metal: the libcurl found (${real}) is not ${LUME_METAL_CURL_LIBRARY_NAME}, "
        "the name the host library opens it by. Set LUME_METAL_CURL_LIBRARY_NAME to its soname "
        "(objdump -p ${real} | grep SONAME).")
    endif()
  endif()
  get_target_property(include CURL::libcurl INTERFACE_INCLUDE_DIRECTORIES)
  add_library(lm_curl_headers INTERFACE)
  if(include)
    target_include_directories(lm_curl_headers SYSTEM INTERFACE ${include})
  endif()
  # The oldest libcurl the host supports is macOS 13.0's, 7.84.0 (README.md, "On macOS"; shared/reference/
  # toolchain.md): it has every function the host calls (curl_multi_poll since 7.66.0), but not
  # CURLOPT_PROTOCOLS_STR (7.85.0), which host/lib/vm/vm_api.c replaces by CURLOPT_PROTOCOLS when
  # the headers or the loaded library lack it, and refuses to go on when neither holds.
  lm_check_declared(LM_CURL_HAVE_MULTI_POLL curl/curl.h FUNCTION curl_multi_poll lm_curl_headers)
  if(NOT LM_CURL_HAVE_MULTI_POLL)
    message(FATAL_ERROR "lume-metal: the libcurl headers found (${include}) do not declare curl_multi_poll: "
      "they are older than libcurl 7.66.0, and the host needs 7.84.0 or later (macOS 13's).\n"
      "  Debian/Ubuntu: sudo apt-get install libcurl4-openssl-dev\n  macOS (Homebrew): brew install curl")
  endif()
  lm_check_declared(LM_CURL_HAVE_PROTOCOLS_STR curl/curl.h EXPRESSION "CURLOPT_PROTOCOLS_STR" lm_curl_headers)
  message(STATUS "lume-metal: libcurl's headers declare CURLOPT_PROTOCOLS_STR: ${LM_CURL_HAVE_PROTOCOLS_STR}")
  target_compile_definitions(lm_curl_headers INTERFACE LM_CURL_HAVE_PROTOCOLS_STR=${LM_CURL_HAVE_PROTOCOLS_STR})
endfunction()

function(lm_require_cmocka part)
  if(TARGET lm::cmocka)
    return()
  endif()
  find_package(cmocka CONFIG QUIET)
  if(NOT cmocka_FOUND)
    _lm_missing("cmocka" "${part}" "libcmocka-dev" "cmocka")
  endif()
  add_library(lm_cmocka INTERFACE)
  target_link_libraries(lm_cmocka INTERFACE ${CMOCKA_LIBRARIES})
  target_include_directories(lm_cmocka SYSTEM INTERFACE ${CMOCKA_INCLUDE_DIR})
  add_library(lm::cmocka ALIAS lm_cmocka)
endfunction()

# lm_require_program(<var> <program> <part> <debian package> <brew formula> [PATHS ...])
function(lm_require_program var program part debian brew)
  find_program(${var} NAMES ${program} PATHS ${ARGN} /usr/sbin)
  if(NOT ${var})
    _lm_missing("${program}" "${part}" "${debian}" "${brew}")
  endif()
endfunction()
