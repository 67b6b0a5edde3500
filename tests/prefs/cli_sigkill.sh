#!/usr/bin/env bash
# `host enable|disable` killed with SIGKILL 100 times: half of the kills inside a write, half at
# random moments. The test-only LUME_METAL_TEST_WRITE_DELAY_US makes every atomic write pause
# half-way through the temporary file and again before the rename; a "mid-write" kill waits for
# the temporary file to exist (the condition, not a guess at when it will) and lands in that pause.
# After each kill the plist is the old or the new version, never torn; the journal is readable;
# the next command converges.
source "$(dirname "$0")/cli_lib.sh" "$@"
KILLS=${LM_TEST_KILLS:-100}
dir="$T/prefs"; state="$T/state"; file="$dir/$DOMAIN.plist"
mkdir -p "$dir"
plist_xml "$EVERY_TYPE" | make_bin "$file"
orig=$(xml_of "$file")
opts=(--prefs-dir "$dir" --state-dir "$state")
"$LM" host enable "${opts[@]}" >/dev/null 2>&1
enabled=$(xml_of "$file")
"$LM" host disable "${opts[@]}" >/dev/null 2>&1
[ "$(xml_of "$file")" = "$orig" ] || fail "setup: enable/disable does not round-trip"

temps() { find "$dir" "$state" -name '.*tmp-*' 2>/dev/null; }

midwrite=0
for ((i = 0; i < KILLS; i++)); do
  if (( i % 2 == 0 )); then action=enable; want=$enabled; else action=disable; want=$orig; fi
  if (( i % 4 < 2 )); then
    # Inside a write: the pause is long, the kill comes as soon as the temporary file exists.
    LUME_METAL_TEST_WRITE_DELAY_US=5000000 "$LM" host "$action" "${opts[@]}" >/dev/null 2>&1 &
    pid=$!
    while [ -z "$(temps)" ]; do
      kill -0 "$pid" 2>/dev/null || fail "kill $i ($action): it finished without writing anything"
      sleep 0.01
    done
  else
    # Anywhere: whatever the moment, the outcome must be one of the two versions.
    LUME_METAL_TEST_WRITE_DELAY_US=$(( 2000 + RANDOM % 20000 )) "$LM" host "$action" "${opts[@]}" \
      >/dev/null 2>&1 &
    pid=$!
    sleep "$(printf '0.%03d' $(( RANDOM % 60 )))"
  fi
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true

  now=$(xml_of "$file")
  [ "$now" = "$orig" ] || [ "$now" = "$enabled" ] || fail "kill $i ($action): the plist is neither the old nor the new version:
$now"
  if [ -n "$(temps)" ]; then midwrite=$((midwrite + 1)); fi
  # The journal is readable, and the same command run again converges.
  "$LM" host status "${opts[@]}" >/dev/null 2>"$T/err" || fail "kill $i ($action): status fails: $(cat "$T/err")"
  "$LM" host "$action" "${opts[@]}" >/dev/null 2>"$T/err" || fail "kill $i ($action): the next $action fails: $(cat "$T/err")"
  [ "$(xml_of "$file")" = "$want" ] || fail "kill $i ($action): the next $action did not converge"
  [ -z "$(temps)" ] || fail "kill $i ($action): temporary files left after the next command"
done
"$LM" host disable "${opts[@]}" >/dev/null 2>&1
[ "$(xml_of "$file")" = "$orig" ] || fail "final disable did not restore the original"
echo "ok: $KILLS kills; $midwrite landed in the middle of a write (temporary file left), all converged"
# Every "inside a write" kill must have left its temporary file for the next command to clean.
[ "$midwrite" -ge $(( (KILLS + 1) / 2 )) ] || fail "only $midwrite of $KILLS kills landed inside a write"
