# Build and verify the universal macOS guest files (cmake -P; see LumeMetalGuestMachO.cmake).
#
#   MODE=build   cross-build guest/ for arm64 and x86_64 in WORK_DIR/<arch>, join the slices with
#                llvm-lipo into OUT_DIR, write OUT_DIR/SHA256SUMS.
#   MODE=verify  check the files in OUT_DIR the way a release is checked before it is copied into
#                a guest (and against what an Xcode build of the same sources gives: SDK version,
#                unwind information, library versions; docs/guest.md), then rebuild everything in
#                WORK_DIR (another directory) and require byte-identical files.
cmake_minimum_required(VERSION 3.25)

set(_archs arm64 x86_64)
set(_files LumeMetalShim.dylib metal-capabilities)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

# The toolchain (compiler, flags, "SDK") as one hash: a sub-build configured with another one is
# configured again from scratch, since a CMake cache keeps the compiler and flags it first found.
set(_toolchain_files cmake/darwin/DarwinCross.cmake cmake/darwin/sdk/SDKSettings.json
  cmake/darwin/sdk/usr/lib/libSystem.tbd cmake/darwin/sdk/usr/lib/libobjc.tbd
  cmake/darwin/sdk/System/Library/Frameworks/Metal.framework/Metal.tbd
  cmake/darwin/sdk/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation.tbd)
set(_toolchain_id "")
foreach(f ${_toolchain_files})
  file(SHA256 "${SOURCE_DIR}/${f}" h)
  string(APPEND _toolchain_id "${h} ${f}\n")
endforeach()

function(build_universal work out_dir)
  foreach(arch ${_archs})
    set(bdir "${work}/${arch}")
    set(stamp "")
    if(EXISTS "${bdir}/lm-toolchain.id")
      file(READ "${bdir}/lm-toolchain.id" stamp)
    endif()
    if(NOT stamp STREQUAL _toolchain_id)
      file(REMOVE_RECURSE "${bdir}")
    endif()
    if(NOT EXISTS "${bdir}/CMakeCache.txt")
      # A clean environment: no CFLAGS/LDFLAGS (e.g. sanitizer flags) leak into the guest files.
      run(${CMAKE_COMMAND} -E env --unset=CFLAGS --unset=CPPFLAGS --unset=LDFLAGS
          ${CMAKE_COMMAND} -S "${SOURCE_DIR}/guest" -B "${bdir}" -G "${GENERATOR}"
          -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}
          -DCMAKE_TOOLCHAIN_FILE=${SOURCE_DIR}/cmake/darwin/DarwinCross.cmake
          -DLUME_METAL_DARWIN_ARCH=${arch} -DLUME_METAL_VERSION=${VERSION}
          -DCMAKE_BUILD_TYPE=Release)
      file(WRITE "${bdir}/lm-toolchain.id" "${_toolchain_id}")
    endif()
    run(${CMAKE_COMMAND} --build "${bdir}")
  endforeach()
  file(MAKE_DIRECTORY "${out_dir}")
  foreach(f ${_files})
    run(${LIPO} -create "${work}/arm64/${f}" "${work}/x86_64/${f}" -output "${out_dir}/${f}")
  endforeach()
  set(sums "")
  foreach(f ${_files})
    file(SHA256 "${out_dir}/${f}" h)
    string(APPEND sums "${h}  ${f}\n")
  endforeach()
  file(WRITE "${out_dir}/SHA256SUMS" "${sums}")
endfunction()

if(MODE STREQUAL "build")
  build_universal("${WORK_DIR}" "${OUT_DIR}")
  return()
elseif(NOT MODE STREQUAL "verify")
  message(FATAL_ERROR "MODE must be build or verify")
endif()

set(failures 0)

# What the "SDK" (SDK_DIR) promises, read from its own files: the SDK version from
# SDKSettings.json, and each library's install name and versions from its .tbd.
file(READ "${SDK_DIR}/SDKSettings.json" sdk_settings)
string(JSON sdk_version GET "${sdk_settings}" Version)
# "1356" -> "1356.0.0", "370.64.2" stays: otool prints three components.
function(full_version v out)
  string(REPLACE "." ";" parts "${v}")
  list(LENGTH parts n)
  while(n LESS 3)
    list(APPEND parts 0)
    math(EXPR n "${n} + 1")
  endwhile()
  string(JOIN "." v ${parts})
  set(${out} "${v}" PARENT_SCOPE)
endfunction()
set(tbd_libs "")
foreach(tbd usr/lib/libSystem.tbd usr/lib/libobjc.tbd System/Library/Frameworks/Metal.framework/Metal.tbd
    System/Library/Frameworks/CoreFoundation.framework/CoreFoundation.tbd)
  file(READ "${SDK_DIR}/${tbd}" text)
  string(REGEX MATCH "\ninstall-name:[ ]*'([^']+)'" _ "${text}")
  set(name "${CMAKE_MATCH_1}")
  string(REGEX MATCH "\ncurrent-version:[ ]*([0-9.]+)" _ "${text}")
  full_version("${CMAKE_MATCH_1}" current)
  string(REGEX MATCH "\ncompatibility-version:[ ]*([0-9.]+)" _ "${text}")
  full_version("${CMAKE_MATCH_1}" compat)
  if(name STREQUAL "" OR current STREQUAL "0.0.0" OR compat STREQUAL "0.0.0")
    message(FATAL_ERROR "${SDK_DIR}/${tbd}: no install-name, current-version or compatibility-version")
  endif()
  list(APPEND tbd_libs "${name}")
  set("want_version_${name}" "compatibility version ${compat}, current version ${current}")
endforeach()
# check(<what> <condition...>): the condition is evaluated by if().
macro(check what)
  if(${ARGN})
    message(STATUS "ok: ${what}")
  else()
    message(SEND_ERROR "FAILED: ${what}")
    math(EXPR failures "${failures} + 1")
  endif()
endmacro()

# Strings of behaviours that belong to research builds only, never to the shipped shim: timing
# interposition, feature-profile overrides, mesh / ray-tracing substitutions (the published
# release removed "clock and timing interposition" with the rest: shared/seeds, the Cua post).
# The clock names are the shim's alone to lack: the probe reads the monotonic clock to time its
# own exercise (exercise_us=), which interposes nothing.
set(forbidden "featureset|feature_set|featureprofile|feature_profile|raytracing|ray_tracing|accelerationstructure|intersectionfunction|mesh")
set(forbidden_in_shim "mach_absolute_time|mach_timebase|clock_gettime|gettimeofday|timebase")

foreach(f ${_files})
  set(p "${OUT_DIR}/${f}")
  check("${f} exists" EXISTS "${p}")
  run(${LIPO} -archs "${p}")
  string(STRIP "${out}" archs)
  separate_arguments(archs UNIX_COMMAND "${archs}")
  list(SORT archs)
  string(JOIN " " archs_text ${archs})
  check("${f}: slices are exactly arm64 and x86_64 (${archs_text})" archs_text STREQUAL "arm64 x86_64")

  foreach(arch ${_archs})
    run(${OBJDUMP} --macho --private-headers --arch=${arch} "${p}")
    set(headers "${out}")
    string(FIND "${headers}" "LC_CODE_SIGNATURE" sig)
    check("${f} [${arch}]: has an ad-hoc code signature (LC_CODE_SIGNATURE)" NOT sig EQUAL -1)
    string(REGEX MATCH "platform macos[^\n]*\n[ ]*sdk ([^\n]*)\n[ ]*minos 13.0\n" plat "${headers}")
    check("${f} [${arch}]: built for macOS, minimum 13.0" plat)
    check("${f} [${arch}]: records SDK ${sdk_version} (found: ${CMAKE_MATCH_1})" CMAKE_MATCH_1 STREQUAL sdk_version)

    # Every function has compact unwind information, so an exception can cross it: __unwind_info
    # has entries (the linker merges neighbours with the same encoding) and none says "no unwind
    # information" (encoding 0).
    run(${OBJDUMP} --macho --unwind-info --arch=${arch} "${p}")
    string(REGEX MATCHALL "\n[ ]+\\[[0-9]+\\]: function offset=0x[0-9a-f]+, encoding[^\n]*" unwind "${out}")
    list(LENGTH unwind n_unwind)
    set(no_unwind "${unwind}")
    list(FILTER no_unwind INCLUDE REGEX "=0x0+$")
    list(LENGTH no_unwind n_no_unwind)
    string(FIND "${headers}" "sectname __unwind_info" has_unwind)
    check("${f} [${arch}]: has __unwind_info (${n_unwind} entries, ${n_no_unwind} without unwind information)"
      NOT has_unwind EQUAL -1 AND n_unwind GREATER 0 AND n_no_unwind EQUAL 0)

    run(${OTOOL} -L -arch ${arch} "${p}")
    set(otool_l "${out}")
    foreach(lib ${tbd_libs})
      # CoreFoundation is the probe's alone (CFString for the exercise kernels).
      if(lib MATCHES "CoreFoundation" AND NOT f STREQUAL "metal-capabilities")
        continue()
      endif()
      string(REPLACE "." "\\." lib_re "${lib}")
      string(REGEX MATCH "\n[\t ]+${lib_re} \\(([^)]*)\\)" _ "${otool_l}")
      check("${f} [${arch}]: links ${lib} with the SDK's versions (${want_version_${lib}}; found: ${CMAKE_MATCH_1})"
        CMAKE_MATCH_1 STREQUAL want_version_${lib})
    endforeach()
    string(REGEX MATCHALL "\n[\t ]+([^ \n]+) \\(compat" libs "${otool_l}")
    set(bad "")
    set(seen_system OFF)
    foreach(l ${libs})
      string(REGEX REPLACE "\n[\t ]+([^ \n]+) \\(compat" "\\1" l "${l}")
      if(l STREQUAL "@rpath/LumeMetalShim.dylib" AND f STREQUAL "LumeMetalShim.dylib")
        continue() # its own install name (otool -L lists LC_ID_DYLIB first)
      elseif(l STREQUAL "/usr/lib/libSystem.B.dylib")
        set(seen_system ON)
      elseif(l STREQUAL "/System/Library/Frameworks/CoreFoundation.framework/Versions/A/CoreFoundation" AND
             f STREQUAL "metal-capabilities")
        continue() # the probe's CFStrings
      elseif(NOT l MATCHES "^(/usr/lib/libobjc\\.A\\.dylib|/System/Library/Frameworks/Metal\\.framework/Versions/A/Metal)$")
        list(APPEND bad "${l}")
      endif()
    endforeach()
    check("${f} [${arch}]: links libSystem and nothing but libobjc and Metal (and, the probe, CoreFoundation) besides (extra: ${bad})" NOT bad AND seen_system)

    run(${NM} -g --defined-only --arch=${arch} "${p}")
    string(REGEX MATCHALL "[^ \n]+\n" syms "${out}")
    string(REPLACE "\n" "" syms "${syms}")
    list(SORT syms)
    if(f STREQUAL "LumeMetalShim.dylib")
      set(want "_lume_metal_shim_active")
    else()
      set(want "__mh_execute_header;_main")
    endif()
    string(JOIN " " syms_text ${syms})
    string(JOIN " " want_text ${want})
    check("${f} [${arch}]: exports exactly ${want_text} (got ${syms_text})" syms_text STREQUAL want_text)
  endforeach()

  if(f STREQUAL "LumeMetalShim.dylib")
    run(${OTOOL} -D -arch arm64 "${p}")
    string(FIND "${out}" "\n@rpath/LumeMetalShim.dylib" id)
    check("${f}: install name is @rpath/LumeMetalShim.dylib" NOT id EQUAL -1)
  endif()

  run(${STRINGS} "${p}")
  string(TOLOWER "${out}" lower)
  if(f STREQUAL "LumeMetalShim.dylib")
    string(REGEX MATCHALL "${forbidden}|${forbidden_in_shim}" hits "${lower}")
  else()
    string(REGEX MATCHALL "${forbidden}" hits "${lower}")
  endif()
  check("${f}: no research-only strings (${hits})" NOT hits)
endforeach()

# SHA256SUMS lists both files with their current hashes.
file(STRINGS "${OUT_DIR}/SHA256SUMS" lines)
list(LENGTH lines n)
check("SHA256SUMS has one line per file" n EQUAL 2)
foreach(f ${_files})
  file(SHA256 "${OUT_DIR}/${f}" h)
  list(FIND lines "${h}  ${f}" at)
  check("SHA256SUMS matches ${f}" NOT at EQUAL -1)
endforeach()

# Reproducibility: a fresh build in another directory gives the same bytes.
file(REMOVE_RECURSE "${WORK_DIR}")
build_universal("${WORK_DIR}/build" "${WORK_DIR}/out")
foreach(f ${_files} SHA256SUMS)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${OUT_DIR}/${f}" "${WORK_DIR}/out/${f}"
                  RESULT_VARIABLE same)
  check("${f}: byte-identical when built in ${WORK_DIR}" same EQUAL 0)
endforeach()

if(failures GREATER 0)
  message(FATAL_ERROR "${failures} check(s) failed")
endif()
message(STATUS "all checks passed")
