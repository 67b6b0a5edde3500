#!/usr/bin/env bash
# Malformed files of each kind: lume-metal exits 1 with an error naming the file, and the file is
# unchanged byte for byte (and so is the journal).
source "$(dirname "$0")/cli_lib.sh" "$@"

printf 'this is not a property list\n' | setup_file garbage
expect_refused garbage "$(file_of garbage)" enable
: | setup_file empty
expect_refused empty "$(file_of empty)" enable
plist_xml "$EVERY_TYPE" | make_bin "$T/good.plist"
head -c "$(( $(stat -c %s "$T/good.plist") - 12 ))" "$T/good.plist" | setup_file truncated-binary
expect_refused truncated-binary "$(file_of truncated-binary)" enable
head -c 200 "$T/good.plist" | setup_file truncated-binary-short
expect_refused truncated-binary-short "$(file_of truncated-binary-short)" enable
plist_xml "$EVERY_TYPE" | head -c 300 | setup_file truncated-xml
expect_refused truncated-xml "$(file_of truncated-xml)" enable
printf '<?xml version="1.0"?>\n<plist version="1.0"><array><true/></array></plist>\n' | setup_file array-root
expect_refused array-root "$(file_of array-root)" enable
printf '<?xml version="1.0"?>\n<plist version="1.0"><array><true/></array></plist>\n' > "$T/arr.xml"
"$PLISTUTIL" -i "$T/arr.xml" -o "$T/arr.bin" -f bin
setup_file array-root-binary < "$T/arr.bin"
expect_refused array-root-binary "$(file_of array-root-binary)" enable
for t in '<date>2020-01-01T00:00:00Z</date>' '<real>1.0</real>' '<data>AQ==</data>' '<dict/>' '<array/>'; do
  name="type-$(printf '%s' "$t" | sed 's/^<\([a-z]*\).*/\1/')"
  plist_xml "<key>$KEY</key>$t<key>Other</key><string>x</string>" | make_bin "$T/t.plist"
  setup_file "$name" < "$T/t.plist"
  expect_refused "$name" "$(file_of "$name")" enable
done

# The preferences "directory" is a file; the plist "file" is a directory.
mkdir -p "$T/dir-is-file"; printf 'x' > "$T/dir-is-file/prefs"
expect_refused dir-is-file "$T/dir-is-file/prefs" enable
mkdir -p "$T/file-is-dir/prefs/$DOMAIN.plist"
expect_refused file-is-dir "$T/file-is-dir/prefs/$DOMAIN.plist" enable

# An unreadable directory. Root reads everything, so as root the command runs as nobody.
mkdir -p "$T/unreadable/prefs" "$T/unreadable/state"
plist_xml "<key>Other</key><string>x</string>" | make_bin "$T/unreadable/prefs/$DOMAIN.plist"
chmod 000 "$T/unreadable/prefs"
chmod 755 "$T"
if [ "$(id -u)" = 0 ]; then
  chown 65534:65534 "$T/unreadable" "$T/unreadable/state"
  chmod 700 "$T/unreadable/state"
  rc=0
  out=$(setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$LM" host enable --prefs-dir "$T/unreadable/prefs" --state-dir "$T/unreadable/state" 2>&1) || rc=$?
else
  rc=0
  out=$("$LM" host enable --prefs-dir "$T/unreadable/prefs" --state-dir "$T/unreadable/state" 2>&1) || rc=$?
fi
chmod 700 "$T/unreadable/prefs"
[ "$rc" = 1 ] || fail "unreadable directory: exit $rc, expected 1: $out"
case "$out" in *"$T/unreadable/prefs"*) ;; *) fail "unreadable directory: message does not name it: $out" ;; esac
[ "$(xml_of "$T/unreadable/prefs/$DOMAIN.plist")" = "$(plist_xml "<key>Other</key><string>x</string>" > "$T/o.xml"; xml_of "$T/o.xml")" ] \
  || fail "unreadable directory: file changed"
n=$((n + 1))
echo "ok: unreadable directory: $out"

# A change is recorded, then the file is damaged: disable refuses too, file and journal unchanged.
mkdir -p "$T/record/prefs"
"$LM" host enable --prefs-dir "$T/record/prefs" --state-dir "$T/record/state" >/dev/null
head -c 20 "$T/good.plist" > "$(file_of record)"
expect_refused record "$(file_of record)" disable
expect_refused record "$(file_of record)" status

# A damaged journal: refused, kept byte for byte, and a timestamped copy made.
mkdir -p "$T/journal/prefs" "$T/journal/state"
chmod 700 "$T/journal/state"
plist_xml "<key>Other</key><string>x</string>" | make_bin "$(file_of journal)"
printf '{"schema": 1, "preference": {"store": ' > "$T/journal/state/state.json"
cp "$T/journal/state/state.json" "$T/journal.json.orig"
expect_refused journal "$T/journal/state/state.json" enable
ls "$T/journal/state/" | grep -q '^state.json.corrupt-' || fail "journal: no timestamped copy"
cmp -s "$T/journal/state/state.json.corrupt-"* "$T/journal.json.orig" || fail "journal: copy differs"
grep -q 'mv ' "$T/journal.err" || fail "journal: the message does not say how to recover"
expect_refused journal "$T/journal/state/state.json" disable
[ "$(ls "$T/journal/state/" | grep -c '^state.json.corrupt-')" = 1 ] || fail "journal: copies pile up"
echo "all $n malformed cases refused"
