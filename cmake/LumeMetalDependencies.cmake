# Dependencies are found the ordinary way. A part whose dependency is missing stops the configure
# with a message that names what to install on Debian/Ubuntu and with Homebrew.
find_package(PkgConfig)

function(_lm_missing what part debian brew)
  message(FATAL_ERROR
    "lume-metal: ${what} is required to build ${part} but was not found.\n"
    "  Debian/Ubuntu: sudo apt-get install ${debian}\n"
    "  macOS (Homebrew): brew install ${brew}\n"
    "Or turn the part off (see cmake/LumeMetalOptions.cmake).")
endfunction()

# lm_require_pkg(<target-alias> <pkg-config module> <part> <debian package> <brew formula>)
function(lm_require_pkg alias module part debian brew)
  if(TARGET ${alias})
    return()
  endif()
  if(NOT PKG_CONFIG_FOUND)
    _lm_missing("pkg-config" "${part}" "pkg-config" "pkg-config")
  endif()
  pkg_check_modules(${alias} QUIET IMPORTED_TARGET GLOBAL ${module})
  if(NOT ${alias}_FOUND)
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

function(lm_require_cjson part)
  if(TARGET lm::cjson)
    return()
  endif()
  find_package(cJSON QUIET)
  if(NOT cJSON_FOUND)
    _lm_missing("cJSON" "${part}" "libcjson-dev" "cjson")
  endif()
  add_library(lm_cjson INTERFACE)
  if(TARGET cjson)
    target_link_libraries(lm_cjson INTERFACE cjson)
  else()
    target_link_libraries(lm_cjson INTERFACE ${CJSON_LIBRARIES})
  endif()
  target_include_directories(lm_cjson SYSTEM INTERFACE ${CJSON_INCLUDE_DIRS})
  add_library(lm::cjson ALIAS lm_cjson)
endfunction()

function(lm_require_curl part)
  if(TARGET CURL::libcurl)
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
  # The oldest libcurl the host supports is macOS 13.0's, 7.84.0 (docs/install.md; shared/reference/
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
  find_program(${var} NAMES ${program} PATHS ${ARGN} /usr/sbin /usr/lib/llvm-14/bin)
  if(NOT ${var})
    _lm_missing("${program}" "${part}" "${debian}" "${brew}")
  endif()
endfunction()
