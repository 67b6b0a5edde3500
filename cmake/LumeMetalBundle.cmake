# Guest bundles: what `lume-metal enable` copies into a guest, one directory per guest platform,
# laid out in the build tree exactly as installed (share/lume-metal/bundles/<platform>/) so that
# the tool finds them next to itself either way. Each holds the shim, the probe, the built-in
# profiles and a manifest.json with versions, file names, modes and SHA-256 (docs/bundle-format.md).
set(LUME_METAL_BUNDLES_DIR ${PROJECT_BINARY_DIR}/share/lume-metal/bundles)

# lm_add_bundle(<platform> OS <uname -s> INJECTION <variable> SHIM <file> PROBE <file> [LIPO <lipo>]
#               DEPENDS <targets>): LIPO, for a Darwin bundle, reads its files' slices.
function(lm_add_bundle platform)
  cmake_parse_arguments(B "" "OS;INJECTION;SHIM;PROBE;LIPO" "DEPENDS" ${ARGN})
  set(dir ${LUME_METAL_BUNDLES_DIR}/${platform})
  get_property(profiles GLOBAL PROPERTY LUME_METAL_PROFILE_FILES)
  if(NOT profiles)
    set(profiles ${LUME_METAL_PROFILE_FILES})
  endif()
  add_custom_command(OUTPUT ${dir}/manifest.json
    COMMAND ${CMAKE_COMMAND}
      -DBUNDLE_DIR=${dir} -DPLATFORM=${platform} -DOS=${B_OS} -DINJECTION=${B_INJECTION}
      -DSHIM=${B_SHIM} -DPROBE=${B_PROBE} "-DPROFILES=${profiles}"
      -DVERSION=${PROJECT_VERSION} -DLIPO=${B_LIPO}
      -P ${PROJECT_SOURCE_DIR}/cmake/LumeMetalBundleManifest.cmake
    DEPENDS ${B_DEPENDS} ${B_SHIM} ${B_PROBE} ${profiles}
      ${PROJECT_SOURCE_DIR}/cmake/LumeMetalBundleManifest.cmake
    COMMENT "Guest bundle ${platform}"
    VERBATIM)
  add_custom_target(bundle-${platform} ALL DEPENDS ${dir}/manifest.json)
  install(DIRECTORY ${dir} DESTINATION ${CMAKE_INSTALL_DATADIR}/lume-metal/bundles USE_SOURCE_PERMISSIONS)
endfunction()

if(LUME_METAL_GUEST AND TARGET lume-metal-shim AND TARGET metal-capabilities
   AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  # The Linux bundle runs in the Lume simulator's guests (real Linux processes, fake Metal).
  lm_add_bundle(linux-${CMAKE_SYSTEM_PROCESSOR} OS Linux INJECTION LD_PRELOAD
    SHIM $<TARGET_FILE:lume-metal-shim> PROBE $<TARGET_FILE:metal-capabilities>
    DEPENDS lume-metal-shim metal-capabilities)
endif()
if(LUME_METAL_GUEST_MACHO AND LUME_METAL_MACHO_SHIM AND LUME_METAL_MACHO_PROBE)
  lm_add_bundle(darwin-universal OS Darwin INJECTION DYLD_INSERT_LIBRARIES
    SHIM ${LUME_METAL_MACHO_SHIM} PROBE ${LUME_METAL_MACHO_PROBE} LIPO ${LUME_METAL_LIPO} DEPENDS guest-macho)
elseif(APPLE AND LUME_METAL_GUEST AND TARGET lume-metal-shim AND TARGET metal-capabilities)
  find_program(LUME_METAL_APPLE_LIPO lipo REQUIRED)
  lm_add_bundle(darwin-universal OS Darwin INJECTION DYLD_INSERT_LIBRARIES LIPO ${LUME_METAL_APPLE_LIPO}
    SHIM $<TARGET_FILE:lume-metal-shim> PROBE $<TARGET_FILE:metal-capabilities>
    DEPENDS lume-metal-shim metal-capabilities)
endif()
