#!/usr/bin/env bash
# A preferences file that is a symbolic link (issue 25, item 7): `host enable` and `host disable`
# refuse it, exit 1 with a message naming it, and leave the link a link, the file it points to
# byte for byte as it was, and the journal without a record. It was replaced by a regular file.
source "$(dirname "$0")/cli_lib.sh" "$@"

prefs="$T/prefs" state="$T/state" real="$T/dotfiles/$DOMAIN.plist"
mkdir -p "$prefs" "$T/dotfiles"
printf '<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>Other</key><true/></dict></plist>\n' >"$real"
ln -s "$real" "$prefs/$DOMAIN.plist"
cp "$real" "$T/real.orig"

for action in enable disable; do
  rc=0
  "$LM" host "$action" --prefs-dir "$prefs" --state-dir "$state" >"$T/$action.out" 2>"$T/$action.err" || rc=$?
  if [ "$action" = enable ]; then
    [ "$rc" = 1 ] || fail "host enable exited $rc, expected 1: $(cat "$T/$action.out" "$T/$action.err")"
    err_has "$action" "preferences file $prefs/$DOMAIN.plist is a symbolic link (to $real)"
    err_has "$action" "nothing was written"
  fi
  [ -L "$prefs/$DOMAIN.plist" ] || fail "host $action: the link was replaced by a regular file"
  [ "$(readlink "$prefs/$DOMAIN.plist")" = "$real" ] || fail "host $action: the link points elsewhere now"
  cmp -s "$real" "$T/real.orig" || fail "host $action: the file the link points to changed"
  [ -z "$(find "$prefs" "$T/dotfiles" -name '.*tmp-*')" ] || fail "host $action: temporary files left"
done
# Nothing recorded: the journal has no preference record (host status says so).
"$LM" host status --prefs-dir "$prefs" --state-dir "$state" --format json >"$T/status.json" || fail "host status"
grep -q '"recorded":[[:space:]]*false' "$T/status.json" || fail "a record was left: $(cat "$T/status.json")"
# Read through the link, the value is what the file it points to holds (reading changes nothing).
grep -q '"present":[[:space:]]*false' "$T/status.json" || fail "host status: $(cat "$T/status.json")"
echo "ok: a symlinked preferences file is refused and left as it was"
