#!/usr/bin/env bash
# `host enable` then `host disable` from every prior state gives back an equivalent plist, checked
# with plistutil; the enabled file is binary, holds <true/> for the key and every other key as it was.
source "$(dirname "$0")/cli_lib.sh" "$@"

# XML without our key's two lines (<key>...</key> and its one-line value).
strip_key() { printf '%s\n' "$1" | awk -v k="<key>$KEY</key>" '$0 ~ k {skip=1; next} skip {skip=0; next} {print}'; }

check_case() { # name, expected "original" text in status, [xml dict body | "NODIR" | "NOFILE"]
  local name=$1 original=$2 body=$3 dir="$T/$1/prefs" state="$T/$1/state" file before after out
  file="$dir/$DOMAIN.plist"
  mkdir -p "$T/$1"
  case "$body" in
    NODIR) ;;
    NOFILE) mkdir -p "$dir" ;;
    XML:*) mkdir -p "$dir"; plist_xml "${body#XML:}" > "$file" ;;
    *) mkdir -p "$dir"; plist_xml "$body" | make_bin "$file" ;;
  esac
  before=$(xml_of "$file")
  [ "$before" != UNREADABLE ] || fail "$name: test setup wrote an unreadable plist"
  local opts=(--prefs-dir "$dir" --state-dir "$state")

  out=$("$LM" host enable "${opts[@]}" --format json) || fail "$name: host enable failed: $out"
  after=$(xml_of "$file")
  [ "$(head -c 8 "$file")" = bplist00 ] || fail "$name: enabled file is not a binary plist"
  printf '%s\n' "$after" | grep -A1 -F "<key>$KEY</key>" | grep -qF '<true/>' \
    || fail "$name: key is not true after enable: $after"
  if [ "$before" = ABSENT ]; then
    ! strip_key "$after" | grep -q '<key>' || fail "$name: enable wrote more than the key: $after"
  else
    [ "$(strip_key "$after")" = "$(strip_key "$before")" ] || fail "$name: other keys changed by enable:
--- before
$before
--- after
$after"
  fi
  out=$("$LM" host status "${opts[@]}" --format json) || fail "$name: host status failed"
  [ "$(json_field "$out" recorded)" = true ] || fail "$name: original not recorded: $out"
  [ "$(json_field "$out" original)" = "\"$original\"" ] || fail "$name: recorded original is $(json_field "$out" original), expected \"$original\""
  # Idempotent: a second enable changes nothing.
  out=$("$LM" host enable "${opts[@]}" --format json) || fail "$name: second enable failed"
  [ "$(json_field "$out" changed)" = false ] || fail "$name: second enable changed something"
  [ "$(xml_of "$file")" = "$after" ] || fail "$name: second enable rewrote the file"

  out=$("$LM" host disable "${opts[@]}" --format json) || fail "$name: host disable failed: $out"
  [ "$(json_field "$out" changed)" = true ] || fail "$name: disable did not report a change"
  after=$(xml_of "$file")
  [ "$after" = "$before" ] || fail "$name: disable did not restore the plist exactly:
--- before
$before
--- after
$after"
  if [ "$body" = NODIR ] && [ -e "$dir" ]; then fail "$name: the directory enable created was left behind"; fi
  out=$("$LM" host status "${opts[@]}" --format json) || fail "$name: status after disable failed"
  [ "$(json_field "$out" recorded)" = false ] || fail "$name: record left after disable"
  echo "ok: $name (original: $original)"
}

check_case no-directory "absent file" NODIR
check_case no-file "absent file" NOFILE
check_case key-absent "absent key" '<key>Other</key><string>kept</string>'
check_case key-false "false (bool)" "<key>$KEY</key><false/><key>Other</key><integer>7</integer>"
check_case key-integer-1 "1 (integer)" "<key>$KEY</key><integer>1</integer>"
check_case key-string-yes "YES (string)" "<key>$KEY</key><string>YES</string>"
check_case every-type-xml "absent key" "XML:$EVERY_TYPE"
check_case every-type-key-false "false (bool)" "$EVERY_TYPE
<key>$KEY</key><false/>"

# Key already true: enable records nothing, disable changes nothing, the file is untouched.
dir="$T/already/prefs"; file="$dir/$DOMAIN.plist"; mkdir -p "$dir"
plist_xml "<key>$KEY</key><true/>$EVERY_TYPE" | make_bin "$file"
cp "$file" "$T/already/orig"
out=$("$LM" host enable --prefs-dir "$dir" --state-dir "$T/already/state" --format json) || fail "already: enable failed"
[ "$(json_field "$out" changed)" = false ] && [ "$(json_field "$out" recorded)" = false ] || fail "already: $out"
"$LM" host disable --prefs-dir "$dir" --state-dir "$T/already/state" >/dev/null || fail "already: disable failed"
cmp -s "$file" "$T/already/orig" || fail "already: file changed"
echo "ok: key-true (nothing recorded, nothing changed)"

# --dry-run changes nothing, text output says what it would do.
dir="$T/dry/prefs"
out=$("$LM" host enable --dry-run --prefs-dir "$dir" --state-dir "$T/dry/state") || fail "dry-run enable failed"
case "$out" in *"would set"*) ;; *) fail "dry-run output: $out" ;; esac
[ ! -e "$dir" ] && [ ! -e "$T/dry/state" ] || fail "dry-run created files"
echo "ok: dry-run"

# Usage errors exit 2.
rc=0; "$LM" host frobnicate --state-dir "$T/u" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "unknown action exits $rc, expected 2"
rc=0; "$LM" host --state-dir "$T/u" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "missing action exits $rc, expected 2"
echo "ok: usage errors"
