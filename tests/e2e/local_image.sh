#!/usr/bin/env bash
# Runners that live inside the VM (issue 27 item 4; docs/ci-topologies.md): `local install` puts
# this machine's own bundle into an image's fixed place, `local env` exports what a job step needs
# to run its workload with it. Scenarios: install (fresh, idempotent, a tampered installed file
# replaced, a tampered bundle refused, an upgrade, what an interrupted install left, symlinked and
# group-writable paths refused), env (sh and $GITHUB_ENV forms; a step that takes them and runs
# the probe against the fake Metal: the shim answers and its activation records say so).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
scenario=${1:?scenario: install or env}
bundle=$LM_BUNDLE_DIR
bundle_id=$(jq -r .bundle_id "$bundle/manifest.json")
P="$E2E_DIR/image/usr/local"      # the image's prefix
D="$P/lib/lume-metal"
mkdir -p "$P"; chmod 755 "$E2E_DIR/image" "$E2E_DIR/image/usr" "$P"

# Every file of the manifest at DIR with its hash and mode, checked by other tools than lume-metal's.
verify_installed() {
  local dir=$1 name sum mode
  while IFS=$'\t' read -r name sum mode; do
    [ -f "$dir/$name" ] && [ ! -L "$dir/$name" ] || fail "$dir/$name missing"
    [ "$(sha256sum "$dir/$name" | cut -d' ' -f1)" = "$sum" ] || fail "$dir/$name: wrong SHA-256"
    [ "$(stat -c %a "$dir/$name")" = "${mode#0}" ] || fail "$dir/$name: mode $(stat -c %a "$dir/$name"), not $mode"
  done < <(jq -r '.files[] | [.name, .sha256, .mode] | @tsv' "$dir/manifest.json")
  cmp -s "$dir/manifest.json" "$bundle/manifest.json" || [ -n "${2:-}" ] || fail "$dir/manifest.json is not the bundle's"
}
# What the install directory holds (names, inodes, mtimes): compared to prove nothing changed.
snapshot() { (cd "$D" && find . -printf '%p %i %T@ %l\n' | sort); }
install_json() { "$LM_BIN" local install --prefix "$P" --format json "$@"; }
# Every document against docs/json-output.schema.json (refusals included).
validate() { "$LM_PYTHON" "$here/../support/json-validate" "$LM_SCHEMA" "$@" || fail "not valid against the schema: $*"; }

case "$scenario" in
install)
  note "fresh (under umask 077, as a careful image build runs): the bundle into PREFIX/lib/lume-metal, current names it, every file as the manifest says, readable by the jobs' user"
  (umask 077 && install_json) >"$E2E_DIR/i1.json" || fail "install: $(cat "$E2E_DIR/i1.json")"
  jq_is "$E2E_DIR/i1.json" .command "local install"
  jq_is "$E2E_DIR/i1.json" .bundle_id "$bundle_id"
  jq_is "$E2E_DIR/i1.json" .changed true
  jq_is "$E2E_DIR/i1.json" .previous null
  jq_is "$E2E_DIR/i1.json" .files "$(( $(jq '.files | length' "$bundle/manifest.json") + 1 ))"
  [ "$(readlink "$D/current")" = "$bundle_id" ] || fail "current: $(readlink "$D/current")"
  verify_installed "$D/current"
  [ "$(stat -c %a "$P/lib")" = 755 ] && [ "$(stat -c %a "$D")" = 755 ] && [ "$(stat -c %a "$D/$bundle_id")" = 755 ] &&
    [ "$(stat -c %a "$D/$bundle_id/profiles")" = 755 ] || fail "directory modes: $(ls -laR "$D")"

  note "again: nothing written, nothing renamed (inodes and times as they were)"
  before=$(snapshot)
  install_json >"$E2E_DIR/i2.json" || fail "re-install: $(cat "$E2E_DIR/i2.json")"
  jq_is "$E2E_DIR/i2.json" .changed false
  jq_is "$E2E_DIR/i2.json" .files 0
  [ "$(snapshot)" = "$before" ] || fail "a re-install changed the directory: $(diff <(echo "$before") <(snapshot))"
  set +e; "$LM_BIN" local install --prefix "$E2E_DIR/linked-nowhere/x" --format json >"$E2E_DIR/i-fail.json" 2>/dev/null; set -e
  jq_is "$E2E_DIR/i-fail.json" .ok false
  validate "$E2E_DIR/i1.json" "$E2E_DIR/i2.json" "$E2E_DIR/i-fail.json"
  "$LM_BIN" local install --prefix "$P" | grep -qx "already installed: $D/current is bundle $bundle_id, every file verified; nothing changed" ||
    fail "text: $("$LM_BIN" local install --prefix "$P")"

  note "a tampered installed file (and one with a wider mode): found, the copy replaced (guestops' installer, as in a guest)"
  printf 'x' >>"$D/current/metal-capabilities"
  chmod 666 "$D/current/profiles/published.json"
  install_json >"$E2E_DIR/i3.json" || fail "repair: $(cat "$E2E_DIR/i3.json")"
  jq_is "$E2E_DIR/i3.json" .changed true
  jq_is "$E2E_DIR/i3.json" .repaired true
  jq_is "$E2E_DIR/i3.json" .removed 0
  verify_installed "$D/current"
  [ "$(ls -A "$D" | sort | tr '\n' ' ')" = ".lock $bundle_id current " ] || fail "left behind: $(ls -A "$D")"

  note "a wider mode alone (the bytes as they were): found by the mode check, the copy replaced"
  chmod 666 "$D/current/profiles/published.json"
  install_json >"$E2E_DIR/i3m.json" || fail "mode repair: $(cat "$E2E_DIR/i3m.json")"
  jq_is "$E2E_DIR/i3m.json" .repaired true
  verify_installed "$D/current"

  note "someone else's file: one in the install directory stays; one inside the bundle's copy stops its replacement"
  echo mine >"$D/notes.txt"
  echo mine >"$D/current/extra.txt"
  printf 'x' >>"$D/current/metal-capabilities"
  set +e; "$LM_BIN" local install --prefix "$P" >"$E2E_DIR/x.out" 2>&1; rc=$?; set -e
  [ "$rc" -eq 1 ] && grep -qF "$D/$bundle_id cannot be replaced" "$E2E_DIR/x.out" &&
    grep -qF "left: $D/$bundle_id/extra.txt (not lume-metal's)" "$E2E_DIR/x.out" || fail "a file of someone else's: exit $rc: $(cat "$E2E_DIR/x.out")"
  [ "$(cat "$D/current/extra.txt")" = mine ] && [ "$(readlink "$D/current")" = "$bundle_id" ] || fail "extra.txt or current changed"
  [ -z "$(find "$D" -maxdepth 1 -name '.staging-*')" ] || fail "the refused install left its staging directory: $(ls -A "$D")"
  rm "$D/current/extra.txt"
  install_json >"$E2E_DIR/i3x.json" || fail "after moving it away: $(cat "$E2E_DIR/i3x.json")"
  jq_is "$E2E_DIR/i3x.json" .repaired true
  jq_is "$E2E_DIR/i3x.json" .removed 0
  [ "$(cat "$D/notes.txt")" = mine ] || fail "notes.txt changed"
  rm "$D/notes.txt"
  verify_installed "$D/current"

  note "a tampered bundle: refused before anything is written; the installed one stays"
  cp -a "$bundle" "$E2E_DIR/bad-bundle"
  printf 'x' >>"$E2E_DIR/bad-bundle/liblume-metal-shim.so"
  before=$(snapshot)
  set +e; "$LM_BIN" local install --prefix "$P" --bundle "$E2E_DIR/bad-bundle" >"$E2E_DIR/bad.out" 2>&1; rc=$?; set -e
  [ "$rc" -eq 1 ] && grep -q 'liblume-metal-shim.so does not match its manifest' "$E2E_DIR/bad.out" ||
    fail "tampered bundle: exit $rc: $(cat "$E2E_DIR/bad.out")"
  [ "$(snapshot)" = "$before" ] || fail "a refused bundle changed the directory"

  note "an upgrade: the new bundle in, current switched, the old one removed; what an interrupted install left removed"
  cp -a "$bundle" "$E2E_DIR/new-bundle"
  printf '\n' >>"$E2E_DIR/new-bundle/profiles/conservative.json"
  sum=$(sha256sum "$E2E_DIR/new-bundle/profiles/conservative.json" | cut -d' ' -f1)
  size=$(stat -c %s "$E2E_DIR/new-bundle/profiles/conservative.json")
  jq --arg s "$sum" --argjson n "$size" '.bundle_id = "0.1.0-000000000002" |
    (.files[] | select(.name == "profiles/conservative.json")) |= (.sha256 = $s | .size = $n)' \
    "$bundle/manifest.json" >"$E2E_DIR/new-bundle/manifest.json"
  mkdir -p "$D/.staging-0.1.0-000000000002-0123456789abcdef/profiles"
  install_json --bundle "$E2E_DIR/new-bundle" >"$E2E_DIR/i4.json" || fail "upgrade: $(cat "$E2E_DIR/i4.json")"
  jq_is "$E2E_DIR/i4.json" .bundle_id 0.1.0-000000000002
  jq_is "$E2E_DIR/i4.json" .previous "$bundle_id"
  jq_is "$E2E_DIR/i4.json" .removed 2
  [ "$(readlink "$D/current")" = 0.1.0-000000000002 ] || fail "current after upgrade: $(readlink "$D/current")"
  bundle=$E2E_DIR/new-bundle verify_installed "$D/current" new
  [ "$(ls -A "$D" | sort | tr '\n' ' ')" = ".lock 0.1.0-000000000002 current " ] || fail "left behind: $(ls -A "$D")"

  note "a symlinked prefix, a symlinked lib/lume-metal: refused, nothing created behind them"
  mkdir -p "$E2E_DIR/elsewhere"; chmod 755 "$E2E_DIR/elsewhere"
  ln -s "$E2E_DIR/elsewhere" "$E2E_DIR/linked"
  set +e; "$LM_BIN" local install --prefix "$E2E_DIR/linked" >"$E2E_DIR/l1.out" 2>&1; rc=$?; set -e
  [ "$rc" -eq 1 ] && grep -qF "$E2E_DIR/linked is a symbolic link" "$E2E_DIR/l1.out" &&
    grep -q '^hint: give the link.s target as --prefix DIR' "$E2E_DIR/l1.out" || fail "symlinked prefix: exit $rc: $(cat "$E2E_DIR/l1.out")"
  [ -z "$(ls -A "$E2E_DIR/elsewhere")" ] || fail "something was created behind the link"
  P2="$E2E_DIR/image2"; mkdir -p "$P2/lib" "$E2E_DIR/elsewhere2"; chmod 755 "$P2" "$P2/lib" "$E2E_DIR/elsewhere2"
  ln -s "$E2E_DIR/elsewhere2" "$P2/lib/lume-metal"
  set +e; "$LM_BIN" local install --prefix "$P2" >"$E2E_DIR/l2.out" 2>&1; rc=$?; set -e
  [ "$rc" -eq 1 ] && grep -qF "$P2/lib/lume-metal is a symbolic link" "$E2E_DIR/l2.out" || fail "symlinked lib/lume-metal: exit $rc: $(cat "$E2E_DIR/l2.out")"
  [ -z "$(ls -A "$E2E_DIR/elsewhere2")" ] || fail "something was created behind the link"

  note "a directory others can write, a relative prefix: refused"
  chmod 775 "$P/lib"
  set +e; "$LM_BIN" local install --prefix "$P" >"$E2E_DIR/w.out" 2>&1; rc=$?; set -e
  [ "$rc" -eq 1 ] && grep -qF "$P/lib can be written by others (mode 0775)" "$E2E_DIR/w.out" || fail "group-writable: exit $rc: $(cat "$E2E_DIR/w.out")"
  chmod 755 "$P/lib"
  set +e; "$LM_BIN" local install --prefix usr/local >"$E2E_DIR/r.out" 2>&1; rc=$?; set -e
  [ "$rc" -eq 2 ] && grep -q "'usr/local' is a relative path" "$E2E_DIR/r.out" || fail "relative prefix: exit $rc: $(cat "$E2E_DIR/r.out")"
  echo "local install: fresh, idempotent, repaired, refused, upgraded as expected"
  ;;
env)
  note "nothing installed: an error that says so, and how to install"
  set +e; "$LM_BIN" local env --prefix "$P" >"$E2E_DIR/n.out" 2>&1; rc=$?; set -e
  [ "$rc" -eq 1 ] && grep -qF "nothing is installed at $D" "$E2E_DIR/n.out" &&
    grep -q '^hint: install it first with `lume-metal local install`' "$E2E_DIR/n.out" || fail "not installed: exit $rc: $(cat "$E2E_DIR/n.out")"
  "$LM_BIN" local install --prefix "$P" >/dev/null

  # The probe as a job step runs it, on this machine's fake Metal at the unlocked level.
  probe_step() { LD_LIBRARY_PATH="$LM_FAKE_METAL" LM_FAKE_METAL_FEATURE_LEVEL=unlocked metal-capabilities --report; }
  note "stock: a step without the environment gets the device's own answers"
  PATH="$D/current:$PATH" probe_step >"$E2E_DIR/stock.report" || fail "stock probe: $(cat "$E2E_DIR/stock.report")"
  grep -qx 'shim_active=0' "$E2E_DIR/stock.report" && grep -qx 'family.Apple9=0' "$E2E_DIR/stock.report" ||
    fail "stock report: $(cat "$E2E_DIR/stock.report")"

  note "sh form: a step that evaluates it runs its workload with the shim; its activation record says so"
  mkdir -m 700 "$E2E_DIR/records-sh"
  "$LM_BIN" local env --prefix "$P" --record-dir "$E2E_DIR/records-sh" >"$E2E_DIR/env.sh" || fail "env: $(cat "$E2E_DIR/env.sh")"
  grep -qxF "export LD_PRELOAD='$D/current/liblume-metal-shim.so'" "$E2E_DIR/env.sh" &&
    grep -qxF "export LUME_METAL_APPLE_FAMILY_MAX='1009'" "$E2E_DIR/env.sh" &&
    grep -qxF "export LUME_METAL_RECORD_DIR='$E2E_DIR/records-sh'" "$E2E_DIR/env.sh" &&
    grep -qxF "export LUME_METAL_SHIM_ARM64E='0'" "$E2E_DIR/env.sh" &&
    grep -qxF "export PATH='$D/current:/opt/homebrew/bin:/usr/local/bin':\"\$PATH\"" "$E2E_DIR/env.sh" ||
    fail "sh form: $(cat "$E2E_DIR/env.sh")"
  # The same variables `run` gives a workload in a guest (its `env` command line).
  [ "$(sed -n 's/^export \([A-Z0-9_]*\)=.*/\1/p' "$E2E_DIR/env.sh" | tr '\n' ' ')" = \
    "LD_PRELOAD LUME_METAL_APPLE_FAMILY_MAX LUME_METAL_MAX_THREADGROUP_MEMORY LUME_METAL_INHERIT_REASON LUME_METAL_SHIM_ARM64E LUME_METAL_RECORD_DIR PATH " ] ||
    fail "variables: $(cat "$E2E_DIR/env.sh")"
  # The step's own shell evaluates it; its workload is that shell's child.
  (eval "$(cat "$E2E_DIR/env.sh")" && LD_LIBRARY_PATH="$LM_FAKE_METAL" LM_FAKE_METAL_FEATURE_LEVEL=unlocked metal-capabilities --report) \
    >"$E2E_DIR/sh.report" || fail "probe after eval: $(cat "$E2E_DIR/sh.report")"
  grep -qx 'shim_active=1' "$E2E_DIR/sh.report" && grep -qx 'family.Apple9=1' "$E2E_DIR/sh.report" &&
    grep -qx 'max_threadgroup_memory=65536' "$E2E_DIR/sh.report" || fail "shimmed report: $(cat "$E2E_DIR/sh.report")"
  record=
  for f in "$E2E_DIR"/records-sh/*.json; do
    if jq -e '.exe | endswith("/metal-capabilities")' "$f" >/dev/null; then record=$f; fi
  done
  [ -n "$record" ] || fail "no activation record of the probe: $(ls "$E2E_DIR/records-sh")"
  jq_is "$record" '.exe' "$D/$bundle_id/metal-capabilities"
  jq_is "$record" '[.questions[] | select(.family == 1009)][0] | [.stock, .given] | tostring' '[false,true]'
  jq_is "$record" '.hooks.device_classes[0].installed' true

  note "\$GITHUB_ENV form: NAME=value lines; the next step (the runner's reading of them) runs its workload with the shim"
  mkdir -m 700 "$E2E_DIR/records-gh"
  export GITHUB_ENV="$E2E_DIR/github_env"; : >"$GITHUB_ENV"
  "$LM_BIN" local env --github-env --prefix "$P" --profile conservative --record-dir "$E2E_DIR/records-gh" >>"$GITHUB_ENV" ||
    fail "github env: $(cat "$GITHUB_ENV")"
  # Not LD_PRELOAD itself: the next step's shell would load the shim and drop it for the workload.
  grep -qxF "LUME_METAL_INJECT=LD_PRELOAD=$D/current/liblume-metal-shim.so" "$GITHUB_ENV" && ! grep -q '^LD_PRELOAD=' "$GITHUB_ENV" &&
    grep -qxF "PATH=$D/current:/opt/homebrew/bin:/usr/local/bin:$PATH" "$GITHUB_ENV" || fail "github form: $(cat "$GITHUB_ENV")"
  ! grep -v '^[A-Z_][A-Z0-9_]*=' "$GITHUB_ENV" || fail "a line that is not NAME=value: $(cat "$GITHUB_ENV")"
  # The next step as the runner starts it: its shell with those variables, its workload through env.
  next_step=()
  while IFS= read -r line; do next_step+=("$line"); done <"$GITHUB_ENV"
  env "${next_step[@]}" LD_LIBRARY_PATH="$LM_FAKE_METAL" LM_FAKE_METAL_FEATURE_LEVEL=unlocked \
    bash -c 'env "$LUME_METAL_INJECT" metal-capabilities --report' >"$E2E_DIR/gh.report" ||
    fail "probe in the next step: $(cat "$E2E_DIR/gh.report")"
  grep -qx 'shim_active=1' "$E2E_DIR/gh.report" || fail "next step's report: $(cat "$E2E_DIR/gh.report")"
  grep -qx "LUME_METAL_APPLE_FAMILY_MAX=$("$LM_BIN" profile show conservative --format json | jq -r '.environment.LUME_METAL_APPLE_FAMILY_MAX')" "$GITHUB_ENV" ||
    fail "the conservative profile's family: $(cat "$GITHUB_ENV")"
  ls "$E2E_DIR"/records-gh/*.json >/dev/null 2>&1 || fail "no activation record from the next step"

  note "JSON: the same variables; a damaged install refused, naming the file"
  "$LM_BIN" local env --prefix "$P" --format json >"$E2E_DIR/env.json" || fail "env json: $(cat "$E2E_DIR/env.json")"
  jq_is "$E2E_DIR/env.json" .command "local env"
  jq_is "$E2E_DIR/env.json" .bundle_id "$bundle_id"
  jq_is "$E2E_DIR/env.json" .variables.LD_PRELOAD "$D/current/liblume-metal-shim.so"
  validate "$E2E_DIR/env.json"
  printf 'x' >>"$D/current/liblume-metal-shim.so"
  set +e; "$LM_BIN" local env --prefix "$P" >"$E2E_DIR/bad.out" 2>&1; rc=$?; set -e
  [ "$rc" -eq 1 ] && grep -qF "the installed bundle does not verify: $D/$bundle_id/liblume-metal-shim.so does not match the manifest (SHA-256)" "$E2E_DIR/bad.out" &&
    grep -q '^hint: `lume-metal local install` (with the same --prefix) replaces it' "$E2E_DIR/bad.out" ||
    fail "damaged: exit $rc: $(cat "$E2E_DIR/bad.out")"
  echo "local env: sh and \$GITHUB_ENV forms load the shim in the next step, as its records show"
  ;;
*) fail "unknown scenario $scenario" ;;
esac
