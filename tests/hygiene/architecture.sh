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
  local dir obj name edges graph err
  dir=$(objects_of "${1:?usage: module_circles MODULE}")
  local objs=()
  # An object counts while its source is in the tree (or generated in the build): one left from a
  # file since moved or removed is not the module's any more.
  [ -n "$dir" ] && [ -d "$dir" ] && while IFS= read -r obj; do
    name=${obj#"$dir"/}; name=${name%.o}
    if [ -f "$SOURCE_DIR/$1/$name" ] || [ -f "$BUILD_DIR/$1/$name" ]; then objs+=("$obj"); fi
  done < <(find "$dir" -name '*.o' | sort)
  [ "${#objs[@]}" -gt 0 ] || fail "$1 has no object files${dir:+ in $dir} (build the tree first; a new module needs its objects found by objects_of in $0)"
  # Every global symbol an object defines (code, data, read-only data, a table, weak or common) and
  # every one it needs, read by two nm runs over all the module's objects (one per object would be
  # hundreds of processes: minutes on a loaded machine). nm -A prefixes each line with its file.
  edges=$( { nm -A --defined-only -g "${objs[@]}" | sed 's/^/D /'; nm -A -u "${objs[@]}" | sed 's/^/U /'; } |
    awk -v dir="$dir/" '
      { f = $2; sub(/:[0-9a-f]*$/, "", f); f = substr(f, length(dir) + 1); sub(/\.o$/, "", f) }
      $1 == "D" && $3 ~ /^[TDBRVWC]$/ { owner[$4] = f; next }
      $1 == "U" { n++; user[n] = f; sym[n] = $4 }
      END { for (i = 1; i <= n; i++) if ((sym[i] in owner) && owner[sym[i]] != user[i]) print user[i], owner[sym[i]] }')
  graph=$(printf '%s\n' "$edges" | sort -u)
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
  echo "$1: no circle among ${#objs[@]} files ($(printf '%s\n' "$graph" | grep -c . || true) edges)"
}

# Every module, each said: one with a circle fails the check, after the others are checked.
no_file_circles() {
  local m bad=""
  for m in $(modules); do module_circles "$m" || bad="$bad $m"; done
  [ -z "$bad" ] || fail "circles among the files of:$bad"
}

# No internal header over 250 lines: one that grows past it holds more than one concept and is
# split by concept (guestops' interface/guest_*.h). The public headers (include/) are the API's
# own and not counted.
headers_are_small() {
  local big
  big=$(cd "$SOURCE_DIR" && find host common guest -name '*.h' -exec wc -l {} + | awk '$2 != "total" && $1 > 250')
  [ -z "$big" ] || fail "internal headers over 250 lines (split them by concept):
$big"
  echo "every internal header of host/, common/ and guest/ is at most 250 lines"
}

# flow/ holds the commands, one file each, and what they share (docs/design.md, "The module graph").
# The commands are the tool's commands whose work is flow's: each must be a command of
# host/cli/main.c's table and have its file in flow/ exporting an entry point of the public API (a
# function declared LM_EXTERN in include/). parts.c is the one file of shared parts (it exports
# none); flow_internal.h and interface/*.h are their headers. No module below flow/ -- any but
# those whose CMakeLists.txt DEPENDS on flow -- nor common/, guest/ or the tool includes one.
FLOW_COMMANDS="enable rollback status probe run agent doctor gc"
FLOW_SHARED="parts"
flow_holds_commands() {
  local flow="$SOURCE_DIR/host/lib/flow" dir="$BUILD_DIR/host/lib/flow/CMakeFiles/lm_flow.dir"
  local api c f name exported bad="" m deps above="" h hits
  api=$(grep -rhoE 'LM_EXTERN\([^)]*\) [^(]*\blm_[a-z0-9_]+\(' "$SOURCE_DIR/include" | grep -oE 'lm_[a-z0-9_]+\($' |
    tr -d '(' | sort -u)
  [ "$(echo "$api" | wc -l)" -ge 50 ] || fail "the public API's entry points were not found in include/"
  for c in $FLOW_COMMANDS; do
    grep -q "{\"$c\", lm_cmd_" "$SOURCE_DIR/host/cli/main.c" || bad="$bad
  '$c' is no command of the tool (host/cli/main.c): FLOW_COMMANDS in $0 is out of date"
    [ -f "$flow/$c.c" ] || bad="$bad
  the command '$c' has no file host/lib/flow/$c.c"
  done
  for f in "$flow"/*.c; do
    name=$(basename "$f" .c)
    [ -f "$dir/$name.c.o" ] || fail "no object of host/lib/flow/$name.c in $dir (build the tree first)"
    exported=$(nm --defined-only -g "$dir/$name.c.o" | awk '$2 == "T" {print $3}' | sort | comm -12 - <(echo "$api") |
      tr '\n' ' ')
    if [[ " $FLOW_COMMANDS " == *" $name "* ]]; then
      [ -n "$exported" ] || bad="$bad
  host/lib/flow/$name.c is a command's file but exports no entry point of the public API"
    elif [[ " $FLOW_SHARED " == *" $name "* ]]; then
      [ -z "$exported" ] || bad="$bad
  host/lib/flow/$name.c holds the shared parts but exports entry points ($exported): a command's go in its own file"
    else
      bad="$bad
  host/lib/flow/$name.c is no command ($FLOW_COMMANDS) and not the shared parts ($FLOW_SHARED.c): move it below
  flow/, to the module it belongs to${exported:+, or add its command (it exports $exported)}"
    fi
  done
  for h in $(cd "$flow" && find . -name '*.h' | sed 's|^\./||'); do
    [ "$h" = flow_internal.h ] || [[ "$h" == interface/*.h ]] || bad="$bad
  host/lib/flow/$h: flow/'s headers are flow_internal.h and interface/*.h"
  done
  # The modules above flow/: those that depend on it (host/CMakeLists.txt's lm_host_module DEPENDS).
  for m in "$SOURCE_DIR"/host/lib/*/CMakeLists.txt; do
    deps=$(tr '\n' ' ' < "$m" | grep -oE 'DEPENDS [^)]*' | sed -E 's/ (LIBS|TEST_HOOKS).*//' || true)
    if [[ " $deps " == *" flow "* ]]; then above="$above $(basename "$(dirname "$m")")"; fi
  done
  for h in $(cd "$flow" && find . -name '*.h' -exec basename {} \;); do
    hits=$(cd "$SOURCE_DIR" && grep -rlF --include='*.c' --include='*.h' "#include \"$h\"" host common guest |
      grep -v -e '^host/lib/flow/' $(for m in $above; do printf -- '-e ^host/lib/%s/ ' "$m"; done) || true)
    [ -z "$hits" ] || bad="$bad
  flow/'s $h is included below flow/ (only$above depend on it): $(echo $hits)"
  done
  [ -z "$bad" ] || fail "host/lib/flow/ holds more than its commands and their shared parts:$bad"
  echo "host/lib/flow/: the commands ($FLOW_COMMANDS) one file each, and $FLOW_SHARED.c; only$above include its headers"
}

"${@:?usage: architecture.sh NAME [ARG...]}"
echo "architecture $1: ok"
