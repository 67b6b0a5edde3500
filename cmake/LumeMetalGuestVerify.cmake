# Build and verify the universal macOS guest files (cmake -P; see LumeMetalGuestMachO.cmake).
#
#   MODE=build   cross-build guest/ for arm64 and x86_64 in WORK_DIR/<arch>, join the slices with
#                llvm-lipo into OUT_DIR, write OUT_DIR/SHA256SUMS.
#   MODE=verify  check the files in OUT_DIR the way a release is checked before it is copied into
#                a guest, then rebuild everything in WORK_DIR (another directory) and require
#                byte-identical files.
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

function(build_universal work out_dir)
  foreach(arch ${_archs})
    set(bdir "${work}/${arch}")
    if(NOT EXISTS "${bdir}/CMakeCache.txt")
      # A clean environment: no CFLAGS/LDFLAGS (e.g. sanitizer flags) leak into the guest files.
      run(${CMAKE_COMMAND} -E env --unset=CFLAGS --unset=CPPFLAGS --unset=LDFLAGS
          ${CMAKE_COMMAND} -S "${SOURCE_DIR}/guest" -B "${bdir}" -G "${GENERATOR}"
          -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}
          -DCMAKE_TOOLCHAIN_FILE=${SOURCE_DIR}/cmake/darwin/DarwinCross.cmake
          -DLUME_METAL_DARWIN_ARCH=${arch} -DLUME_METAL_VERSION=${VERSION}
          -DCMAKE_BUILD_TYPE=Release)
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
# interposition, feature-profile overrides, mesh / ray-tracing substitutions.
set(forbidden "mach_absolute_time|mach_timebase|clock_gettime|gettimeofday|timebase|featureset|feature_set|featureprofile|feature_profile|raytracing|ray_tracing|accelerationstructure|intersectionfunction|mesh")

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
    string(REGEX MATCH "platform macos[^\n]*\n[ ]*sdk [^\n]*\n[ ]*minos 13.0" plat "${headers}")
    check("${f} [${arch}]: built for macOS, minimum 13.0" plat)

    run(${OTOOL} -L -arch ${arch} "${p}")
    string(REGEX MATCHALL "\n[\t ]+([^ \n]+) \\(compat" libs "${out}")
    set(bad "")
    set(seen_system OFF)
    foreach(l ${libs})
      string(REGEX REPLACE "\n[\t ]+([^ \n]+) \\(compat" "\\1" l "${l}")
      if(l STREQUAL "@rpath/LumeMetalShim.dylib" AND f STREQUAL "LumeMetalShim.dylib")
        continue() # its own install name (otool -L lists LC_ID_DYLIB first)
      elseif(l STREQUAL "/usr/lib/libSystem.B.dylib")
        set(seen_system ON)
      elseif(NOT l MATCHES "^(/usr/lib/libobjc\\.A\\.dylib|/System/Library/Frameworks/Metal\\.framework/Versions/A/Metal)$")
        list(APPEND bad "${l}")
      endif()
    endforeach()
    check("${f} [${arch}]: links libSystem and nothing but libobjc and Metal besides (extra: ${bad})" NOT bad AND seen_system)

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
  string(REGEX MATCHALL "${forbidden}" hits "${lower}")
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
