#!/usr/bin/env bash
# architecture.sh NAME: one rule of docs/design.md ("The module graph") checked on the tree and its
# objects (see CMakeLists.txt).
set -euo pipefail
: "${SOURCE_DIR:?}" "${BUILD_DIR:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }

# Only record/ knows the journal's layout and keys: no other module reads or changes the document
# the state module keeps (lm_state_doc), and no other module spells a key of record/'s tables in
# a cJSON call on it.
journal_keys_in_record_only() {
  local found keys
  found=$(cd "$SOURCE_DIR" && grep -rn 'lm_state_doc' host --include='*.c' --include='*.h' |
    grep -v -e '^host/lib/record/' -e '^host/lib/state/' || true)
  [ -z "$found" ] || fail "the journal document touched outside record/:
$found"
  # The journal's own keys (record/'s tables): none may be spelled in a module that can reach the
  # journal (one that includes state.h or record.h) outside record/ and state/.
  keys=$(cd "$SOURCE_DIR/host/lib/record" && grep -ohE '\{ (PART_[A-Z_]+, (NULL|"[a-z_]+"), )?"[a-z_]+", [AK]_' ./*.c |
    grep -oE '"[a-z_]+", [AK]_' | grep -oE '"[a-z_]+"' | sort -u)
  [ "$(echo "$keys" | wc -l)" -ge 20 ] || fail "record/'s key tables were not found (found: $keys)"
  local file key hits=""
  for file in $(cd "$SOURCE_DIR" && grep -rlE '#include "(state|record)\.h"' host --include='*.c' --include='*.h' |
      grep -v -e '^host/lib/record/' -e '^host/lib/state/'); do
    for key in $keys; do
      if grep -nE "cJSON_[A-Za-z]+\([^;]*${key}" "$SOURCE_DIR/$file" >/dev/null; then
        hits="$hits $file:$key"
      fi
    done
  done
  [ -z "$hits" ] || fail "journal keys spelled outside record/:$hits"
}

# No file of a module needs another that needs it back (directly or through others): the graph of
# which object file calls which (or reads which one's data), read from the built objects.
# A module is a folder of the tree: every host/lib/* folder, host/cli (the tool), common/, and each
# folder of guest/ with sources (the shim, the probe). The list is read from the tree, so a new
# module is checked as soon as it exists, and one without objects fails (it was not built).
modules() {
  local d
  (cd "$SOURCE_DIR" && for d in host/lib/*/; do [ -f "$d/CMakeLists.txt" ] && echo "${d%/}"; done)
  echo host/cli
  echo common
  # The guest is built for this machine unless the build says otherwise (LUME_METAL_GUEST).
  if ! grep -qx 'LUME_METAL_GUEST:BOOL=OFF' "$BUILD_DIR/CMakeCache.txt"; then
    (cd "$SOURCE_DIR" && for d in guest/*/; do ls "$d"*.c >/dev/null 2>&1 && echo "${d%/}"; done)
  fi
}

# objects_of MODULE: the folder holding the module's object files (one target's, when several
# targets build the same sources: the tool with and without the test hooks, the two shims).
objects_of() {
  local dir
  case "$1" in
    host/lib/*) echo "$BUILD_DIR/$1/CMakeFiles/lm_${1#host/lib/}.dir" ;;
    host/cli) echo "$BUILD_DIR/host/cli/CMakeFiles/lume-metal-cli.dir" ;;
    common) echo "$BUILD_DIR/common/CMakeFiles/lm_common.dir" ;;
    guest/*)
      for dir in "$BUILD_DIR"/guest/CMakeFiles/*.dir/"${1#guest/}"; do
        if ls "$dir"/*.o >/dev/null 2>&1; then echo "$dir"; return; fi
      done ;;
  esac
}

module_circles() { # module_circles MODULE (a folder of the tree: host/lib/ssh, host/cli, common)
  local dir obj name sym edges="" graph err
  local -A owner=()
  dir=$(objects_of "${1:?usage: module_circles MODULE}")
  local objs=()
  # An object counts while its source is in the tree (or generated in the build): one left from a
  # file since moved or removed is not the module's any more.
  [ -n "$dir" ] && [ -d "$dir" ] && while IFS= read -r obj; do
    name=${obj#"$dir"/}; name=${name%.o}
    if [ -f "$SOURCE_DIR/$1/$name" ] || [ -f "$BUILD_DIR/$1/$name" ]; then objs+=("$obj"); fi
  done < <(find "$dir" -name '*.o' | sort)
  [ "${#objs[@]}" -gt 0 ] || fail "$1 has no object files${dir:+ in $dir} (build the tree first; a new module needs its objects found by objects_of in $0)"
  # Every global symbol an object defines: code, data, read-only data (a table), weak or common.
  for obj in "${objs[@]}"; do
    name=${obj#"$dir"/}; name=${name%.o}
    for sym in $(nm --defined-only -g "$obj" | awk '$2 ~ /^[TDBRVWC]$/ {print $3}'); do owner[$sym]=$name; done
  done
  for obj in "${objs[@]}"; do
    name=${obj#"$dir"/}; name=${name%.o}
    for sym in $(nm -u "$obj" | awk '{print $2}'); do
      if [ -n "${owner[$sym]:-}" ] && [ "${owner[$sym]}" != "$name" ]; then edges="$edges$name ${owner[$sym]}"$'\n'; fi
    done
  done
  graph=$(printf '%s' "$edges" | sort -u)
  err="$BUILD_DIR/tsort-$(echo "$1" | tr / -).err"
  # tsort reports a loop on stderr when the graph has one.
  if ! printf '%s\n' "$graph" | tsort >/dev/null 2>"$err" || [ -s "$err" ]; then
    # tsort names each loop's files after a "input contains a loop" line: one line per loop.
    echo "FAIL: $1 has a circle among its files:" >&2
    awk '/input contains a loop/ {if (l != "") print "  " l " -> " f; l = ""; next}
         {sub(/^tsort: /, ""); if (l == "") {l = $0; f = $0} else l = l " -> " $0}
         END {if (l != "") print "  " l " -> " f}' "$err" >&2
    echo "  its edges (caller callee):" >&2
    printf '%s\n' "$graph" | sed 's/^/    /' >&2
    return 1
  fi
  echo "$1: no circle among ${#objs[@]} files ($(printf '%s' "$edges" | sort -u | grep -c . || true) edges)"
}

# Every module, each said: one with a circle fails the check, after the others are checked.
no_file_circles() {
  local m bad=""
  for m in $(modules); do module_circles "$m" || bad="$bad $m"; done
  [ -z "$bad" ] || fail "circles among the files of:$bad"
}

"${@:?usage: architecture.sh NAME [ARG...]}"
echo "architecture $1: ok"
