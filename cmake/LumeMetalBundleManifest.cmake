# Script mode (cmake -P): assemble one guest bundle directory and write its manifest.json.
# Inputs: BUNDLE_DIR PLATFORM OS INJECTION SHIM PROBE PROFILES VERSION.
file(REMOVE_RECURSE ${BUNDLE_DIR})
file(MAKE_DIRECTORY ${BUNDLE_DIR}/profiles)
get_filename_component(shim_name ${SHIM} NAME)
get_filename_component(probe_name ${PROBE} NAME)
file(COPY ${SHIM} DESTINATION ${BUNDLE_DIR}
  FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
file(COPY ${PROBE} DESTINATION ${BUNDLE_DIR}
  FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)
set(files "${shim_name}:0644" "${probe_name}:0755")
foreach(p ${PROFILES})
  get_filename_component(n ${p} NAME)
  file(COPY ${p} DESTINATION ${BUNDLE_DIR}/profiles
    FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
  list(APPEND files "profiles/${n}:0644")
endforeach()

set(json "{}")
string(JSON json SET "${json}" format "\"lume-metal-bundle\"")
string(JSON json SET "${json}" version 1)
string(JSON json SET "${json}" bundle_version "\"${VERSION}\"")
string(JSON json SET "${json}" platform "\"${PLATFORM}\"")
string(JSON json SET "${json}" os "\"${OS}\"")
string(JSON json SET "${json}" injection_variable "\"${INJECTION}\"")
string(JSON json SET "${json}" shim "\"${shim_name}\"")
string(JSON json SET "${json}" probe "\"${probe_name}\"")
string(JSON json SET "${json}" files "[]")
set(i 0)
set(all_hashes "")
foreach(entry ${files})
  string(REPLACE ":" ";" parts "${entry}")
  list(GET parts 0 name)
  list(GET parts 1 mode)
  file(SHA256 ${BUNDLE_DIR}/${name} hash)
  file(SIZE ${BUNDLE_DIR}/${name} size)
  string(JSON json SET "${json}" files ${i}
    "{\"name\":\"${name}\",\"sha256\":\"${hash}\",\"size\":${size},\"mode\":\"${mode}\"}")
  string(APPEND all_hashes "${hash}  ${name}\n")
  math(EXPR i "${i} + 1")
endforeach()
# The bundle id names the guest directory: the version plus a digest of every file, so a
# different build is a different directory and an upgrade switches `current` atomically.
string(SHA256 digest "${all_hashes}")
string(SUBSTRING ${digest} 0 12 short)
string(JSON json SET "${json}" bundle_id "\"${VERSION}-${short}\"")
file(WRITE ${BUNDLE_DIR}/manifest.json "${json}\n")
