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
# which object file calls which, read from the built objects (flow/: "no import circles").
module_circles() { # module_circles MODULE
  local dir="$BUILD_DIR/host/lib/$1/CMakeFiles/lm_$1.dir" obj name sym edges="" graph
  local -A owner=()
  [ -d "$dir" ] || fail "no objects of $1 in $dir (build the tree first)"
  for obj in "$dir"/*.o; do
    name=$(basename "$obj" .c.o)
    for sym in $(nm --defined-only -g "$obj" | awk '$2 ~ /[TDB]/ {print $3}'); do owner[$sym]=$name; done
  done
  for obj in "$dir"/*.o; do
    name=$(basename "$obj" .c.o)
    for sym in $(nm -u "$obj" | awk '{print $2}'); do
      if [ -n "${owner[$sym]:-}" ] && [ "${owner[$sym]}" != "$name" ]; then edges="$edges$name ${owner[$sym]}"$'\n'; fi
    done
  done
  graph=$(printf '%s' "$edges" | sort -u)
  # tsort reports a loop on stderr when the graph has one.
  if ! printf '%s\n' "$graph" | tsort >/dev/null 2>"$BUILD_DIR/$1-tsort.err" || [ -s "$BUILD_DIR/$1-tsort.err" ]; then
    fail "$1 has a circle among its files: $(cat "$BUILD_DIR/$1-tsort.err")
edges:
$graph"
  fi
  echo "$1: file graph (caller callee):"
  printf '%s\n' "$graph"
}

no_file_circles() {
  local m
  for m in flow guestops record; do module_circles "$m"; done
}

# flow/ stays the commands: under 3000 lines.
flow_is_small() {
  local lines
  lines=$(cat "$SOURCE_DIR"/host/lib/flow/*.c "$SOURCE_DIR"/host/lib/flow/*.h | wc -l)
  [ "$lines" -lt 3000 ] || fail "host/lib/flow/ is $lines lines (at most 2999: move what is not a command out)"
  echo "host/lib/flow/: $lines lines"
}

"${1:?usage: architecture.sh NAME}"
echo "architecture $1: ok"
