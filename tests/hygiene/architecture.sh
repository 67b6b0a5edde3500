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

# The walls between modules (docs/design.md, "The module graph"): a module calls another's functions
# (or reads its data) only along an edge the map draws, and the map draws exactly the DEPENDS of each
# module's CMakeLists.txt (linked PRIVATE: a module sees the interface/ headers of the modules it
# names, not theirs in turn). The public headers (include/) are open to every module, so the
# compiler alone cannot hold the wall for public calls: the edges are read from the built objects,
# which symbol each module's objects need and which module's objects define it.
design_edges() { # the map's edges, "from to" per line, from docs/design.md's "The module graph" block
  awk '/^### The module graph/ {g = 1; next} g && /^```/ {if (b) exit; b = 1; next}
       g && b && match($0, /^[a-z]+ (─)+> /) {
         from = $1; rest = substr($0, RLENGTH + 1); sub(/  .*/, "", rest)
         n = split(rest, to, /, */); for (i = 1; i <= n; i++) print from, to[i] }' "$SOURCE_DIR/docs/design.md"
}
cmake_edges() { # every host module's DEPENDS, "from to" per line
  local m deps d
  for m in "$SOURCE_DIR"/host/lib/*/CMakeLists.txt; do
    deps=$(tr '\n' ' ' < "$m" | grep -oE 'lm_host_module\([a-z]+ [^)]*' | grep -oE 'DEPENDS [^)]*' |
      sed -E 's/^DEPENDS //; s/ (LIBS|TEST_HOOKS).*//' || true)
    for d in $deps; do echo "$(basename "$(dirname "$m")") $d"; done
  done
}
module_edges() {
  local m dir host_modules="" drawn declared used bad=""
  for m in $(modules); do case "$m" in host/lib/*) host_modules="$host_modules ${m#host/lib/}" ;; esac; done
  drawn=$(design_edges | awk -v mods="$host_modules" 'BEGIN {n = split(mods, a, " "); for (i = 1; i <= n; i++) h[a[i]] = 1}
    ($1 in h) && ($2 in h)' | sort -u)
  [ "$(echo "$drawn" | grep -c .)" -ge 10 ] || fail "docs/design.md's module map was not found (\"### The module graph\", its first code block, lines \"module ──> a, b\")"
  declared=$(cmake_edges | sort -u)
  [ "$drawn" = "$declared" ] || bad="$bad
  the map (docs/design.md) and the DEPENDS (host/lib/*/CMakeLists.txt) differ (< map only, > DEPENDS only):
$(diff <(echo "$drawn") <(echo "$declared") | grep '^[<>]' | sed 's/^/    /')"
  # Which module defines each global symbol, and which symbols each module's objects need.
  used=$(for m in $host_modules; do
      dir="$BUILD_DIR/host/lib/$m/CMakeFiles/lm_$m.dir"
      ls "$dir"/*.o >/dev/null 2>&1 || fail "host/lib/$m has no object files in $dir (build the tree first)"
      nm --defined-only -g "$dir"/*.o | awk -v m="$m" 'NF == 3 && $2 ~ /^[TDBRVWC]$/ {print "D", m, $3}'
      nm -u "$dir"/*.o | awk -v m="$m" 'NF == 2 {print "U", m, $2}'
    done | awk '$1 == "D" {owner[$3] = $2; next} {n++; user[n] = $2; sym[n] = $3}
      END {for (i = 1; i <= n; i++) if ((sym[i] in owner) && owner[sym[i]] != user[i]) print user[i], owner[sym[i]], sym[i]}' |
    sort -u)
  [ "$(echo "$used" | grep -c .)" -ge 50 ] || fail "too few calls between modules were read from the objects"
  local off
  off=$(echo "$used" | awk 'NR == FNR {ok[$1 " " $2] = 1; next} !(($1 " " $2) in ok) {print "    " $1 " -> " $2 ": " $3}' \
    <(echo "$declared") -)
  [ -z "$off" ] || bad="$bad
  calls along no edge of the map (module -> module: the symbol):
$off"
  [ -z "$bad" ] || fail "the module walls leak:$bad"
  echo "$(echo "$declared" | grep -c .) edges drawn and declared alike; $(echo "$used" | awk '{print $1, $2}' | sort -u | grep -c .) used, each along one"
}

# Each "MODULE:OUTSIDE:INSIDE" (tests/hygiene/CMakeLists.txt): the module's probe that includes
# OUTSIDE, an interface header of a module it does not depend on, is refused by the compiler for
# that header; the one that includes INSIDE, a dependency's, compiles.
include_walls() {
  local spec m out in log bad="" n=0
  for spec in "$@"; do
    IFS=: read -r m out in <<<"$spec"
    log="$BUILD_DIR/wall-$m.log"
    if "$CMAKE" --build "$BUILD_DIR" --target "lm_wall_${m}_out" >"$log" 2>&1; then
      bad="$bad
  $m compiles with $out, a header of a module it does not depend on"
    elif ! grep -qE "$out(: No such file|' file not found)" "$log"; then
      bad="$bad
  $m's probe of $out failed for another reason: $(tail -n 5 "$log")"
    fi
    if [ -n "$in" ] && ! "$CMAKE" --build "$BUILD_DIR" --target "lm_wall_${m}_in" >"$log" 2>&1; then
      bad="$bad
  $m does not compile with $in, its dependency's header: $(tail -n 5 "$log")"
    fi
    n=$((n + 1))
  done
  [ "$n" -ge 8 ] || fail "only $n modules' walls were given (tests/hygiene/CMakeLists.txt)"
  [ -z "$bad" ] || fail "the include walls do not hold:$bad"
  echo "$n modules: a header of a module they do not depend on is refused, their dependencies' compile"
}

# One way a child process starts (docs/design.md, proc/): posix_spawn in proc.c's lm_proc_spawn and
# nowhere else of the host's code or common's; no popen, system, fork or exec* (a shell of ours, or a
# second way) anywhere.
one_spawn() {
  local hits
  hits=$(cd "$SOURCE_DIR" && grep -rnE '\b(posix_spawnp?|popen|system|fork|vfork|execv[pe]*|execl[pe]*)\(' host common/src \
    --include='*.c' | grep -vE '^[^:]+:[0-9]+:\s*(/?\*|//)' | grep -v '^host/lib/proc/proc.c:' || true)
  [ -z "$hits" ] || fail "a child process started outside proc's lm_proc_spawn:
$hits"
  [ "$(grep -c 'posix_spawn(' "$SOURCE_DIR/host/lib/proc/proc.c")" -eq 1 ] || fail "proc.c starts children in more than one place"
  echo "every child process of the host's code starts through lm_proc_spawn (host/lib/proc/proc.c)"
}

# The tool is a thin layer over the main surface (include/lume-metal.h): it includes no lower-level
# header (lume-metal/sys/) and, linking the shared library, no internal one (docs/design.md).
tool_uses_main_surface() {
  local hits
  hits=$(cd "$SOURCE_DIR" && grep -rnE '#include [<"]lume-metal/sys/' host/cli || true)
  [ -z "$hits" ] || fail "the tool reaches below the main surface:
$hits"
  echo "host/cli includes nothing of lume-metal/sys/"
}

# The library's messages state facts and never name an option or command of the tool
# (docs/embedding.md, "Errors"): the tool adds those in its hints (host/cli/output.c). Read from the
# calls that make a message -- lm_error_set, lm_error_prefix, lm_outcome_message, lm_outcome_append,
# lm_outcome_fail_msg, lm_log, lm_state_corrupt, lm_json_fail -- each whole statement up to its ';':
# none may spell `--OPTION` for an option of the tool's table (host/cli/options.c) or
# `lume-metal COMMAND` for a command of its table (host/cli/main.c). Generated documents (a bench
# folder's README, a report) are for people and name commands; they are written otherwise.
messages_name_no_option() {
  local options commands hits
  options=$(grep -oE '^\s*\{"[a-z][a-z0-9-]*", (no|required|optional)_argument' "$SOURCE_DIR/host/cli/options.c" |
    grep -oE '"[a-z0-9-]+"' | tr -d '"' | sort -u)
  commands=$(grep -oE '\{"[a-z][a-z-]*", lm_cmd_' "$SOURCE_DIR/host/cli/main.c" | grep -oE '"[a-z-]+"' | tr -d '"' | sort -u)
  [ "$(echo "$options" | wc -l)" -ge 30 ] || fail "the tool's options were not found in host/cli/options.c"
  [ "$(echo "$commands" | wc -l)" -ge 10 ] || fail "the tool's commands were not found in host/cli/main.c"
  hits=$(cd "$SOURCE_DIR" && find host/lib common/src -name '*.c' | sort | while read -r f; do
      awk -v f="$f" '
        function flush() { if (stmt != "") print f ":" line ": " stmt; stmt = "" }
        !in_call && match($0, /(lm_error_set|lm_error_prefix|lm_outcome_message|lm_outcome_append|lm_outcome_fail_msg|lm_log|lm_state_corrupt|lm_json_fail)\(/) {
          in_call = 1; line = FNR; stmt = substr($0, RSTART) }
        in_call && FNR != line { stmt = stmt " " $0 }
        in_call && /;[[:space:]]*($|\/)/ { in_call = 0; flush() }' "$f"
    done | awk -v opts="$options" -v cmds="$commands" '
      BEGIN { n = split(opts, o, "\n"); for (i = 1; i <= n; i++) opt[o[i]] = 1
              n = split(cmds, c, "\n"); for (i = 1; i <= n; i++) cmd[c[i]] = 1 }
      { s = $0; bad = ""
        while (match(s, /--[a-z][a-z0-9-]*/)) { w = substr(s, RSTART + 2, RLENGTH - 2); if (w in opt) bad = bad " --" w; s = substr(s, RSTART + RLENGTH) }
        s = $0
        while (match(s, /`lume-metal [a-z][a-z-]*/)) { w = substr(s, RSTART + 12, RLENGTH - 12); if (w in cmd) bad = bad " `lume-metal " w "`"; s = substr(s, RSTART + RLENGTH) }
        if (bad != "") { split($0, p, ":"); print "  " p[1] ":" p[2] ":" bad } }')
  [ -z "$hits" ] || fail "library messages that name the tool's options or commands (say the fact; add the option in a hint of host/cli/output.c):
$hits"
  echo "no library message names one of the tool's $(echo "$options" | wc -l) options or $(echo "$commands" | wc -l) commands"
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
