#!/usr/bin/env bash
# 8 processes x 50 rounds of `host enable|disable|status` at once on one preference and one
# journal: every command succeeds, every status is consistent (a record exists exactly when the key
# holds our value), and at the end the file is exactly the original again.
source "$(dirname "$0")/cli_lib.sh" "$@"
WORKERS=${LM_TEST_WORKERS:-8}
ROUNDS=${LM_TEST_ROUNDS:-50}
dir="$T/prefs"; state="$T/state"; file="$dir/$DOMAIN.plist"
mkdir -p "$dir"
plist_xml "$EVERY_TYPE" | make_bin "$file"
orig=$(xml_of "$file")
opts=(--prefs-dir "$dir" --state-dir "$state" --format json)
# Create the journal directory once, so that every status reads under the shared lock.
"$LM" host enable "${opts[@]}" >/dev/null && "$LM" host disable "${opts[@]}" >/dev/null

worker() {
  local w=$1 i action out rc recorded present matches bad
  for ((i = 0; i < ROUNDS; i++)); do
    case $(( (RANDOM + w) % 3 )) in 0) action=enable ;; 1) action=disable ;; *) action=status ;; esac
    rc=0
    out=$("$LM" host "$action" "${opts[@]}" 2>"$T/w$w.err") || rc=$?
    if [ "$rc" != 0 ]; then
      echo "worker $w round $i: host $action exited $rc: $(cat "$T/w$w.err")" >&2
      return 1
    fi
    recorded=$(json_field "$out" recorded)
    present=$(json_field "$out" present)
    matches=$(json_field "$out" matches)
    # Our change is in effect exactly when the key is there (the original has no key).
    bad=0
    if [ "$recorded" = true ] && [ "$matches" != true ]; then bad=1; fi
    if [ "$recorded" = false ] && [ "$present" = true ]; then bad=1; fi
    if [ "$bad" = 1 ]; then
      echo "worker $w round $i: inconsistent $action: recorded=$recorded present=$present matches=$matches" >&2
      return 1
    fi
  done
}

start=$(date +%s.%N)
pids=()
for ((w = 0; w < WORKERS; w++)); do
  worker "$w" & pids+=($!)
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=1; done
end=$(date +%s.%N)
[ "$failed" = 0 ] || fail "a worker failed"

# Nothing torn, no temporary file left, and the final state is right.
[ "$(xml_of "$file")" != UNREADABLE ] || fail "the plist is unreadable after the run"
out=$("$LM" host status "${opts[@]}") || fail "status after the run failed"
if [ "$(json_field "$out" recorded)" = true ]; then
  [ "$(json_field "$out" matches)" = true ] || fail "final state inconsistent: $out"
fi
"$LM" host disable "${opts[@]}" >/dev/null || fail "final disable failed"
[ "$(xml_of "$file")" = "$orig" ] || fail "the file is not the original after the final disable"
out=$("$LM" host status "${opts[@]}")
[ "$(json_field "$out" recorded)" = false ] || fail "a record is left after the final disable"
[ -z "$(find "$dir" "$state" -name '.*tmp-*')" ] || fail "temporary files left behind"
echo "ok: $WORKERS processes x $ROUNDS rounds in $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s"
