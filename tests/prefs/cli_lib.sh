# Shared by the cli_*.sh tests: the real lume-metal binary, plistutil as the independent reader,
# one private temporary directory removed on exit whatever happens.
# usage (from a test): source cli_lib.sh LUME_METAL PLISTUTIL
. "$(dirname "${BASH_SOURCE[0]}")/../support/lm_test.sh"
LM=$1
PLISTUTIL=$2
DOMAIN=com.apple.gpusw.ParavirtualizedGraphics
KEY=ForceUnrestrictedDeviceFeatureLevel
lm_test_scratch prefs-cli
unset LUME_METAL_PREFS_DIR LUME_METAL_STATE_DIR LUME_METAL_TEST_WRITE_DELAY_US

# The plist as XML according to plistutil, or "ABSENT" / "UNREADABLE". plistutil exits 0 even when it cannot
# read its input, so its output is checked instead.
xml_of() {
  local out
  if [ ! -e "$1" ]; then echo ABSENT; return; fi
  # Through binary and back, so that XML and binary inputs print the same canonical XML.
  local canon
  canon=$(mktemp "$T/.canon.XXXXXX")
  "$PLISTUTIL" -i "$1" -o "$canon" -f bin >/dev/null 2>&1 || true
  out=$("$PLISTUTIL" -i "$canon" -o - -f xml 2>/dev/null) || true
  rm -f "$canon"
  case "$out" in
    *"<plist"*) printf '%s\n' "$out" ;;
    *) echo "UNREADABLE" ;;
  esac
}

# An XML plist (on stdin) written as a binary file, by plistutil.
make_bin() {
  cat > "$T/.src.xml"
  "$PLISTUTIL" -i "$T/.src.xml" -o "$1" -f bin
  rm -f "$T/.src.xml"
  [ "$(head -c 8 "$1")" = bplist00 ] || fail "plistutil did not write a binary plist to $1"
}

plist_xml() { # the body of a <dict> -> a whole XML plist on stdout
  printf '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n<plist version="1.0">\n<dict>\n%s\n</dict>\n</plist>\n' "$1"
}

# Every plist type among the other keys.
EVERY_TYPE='<key>aDict</key><dict><key>inner</key><string>x</string><key>n</key><integer>-5</integer></dict>
<key>anArray</key><array><integer>1</integer><string>two</string><false/><dict/></array>
<key>someData</key><data>AAECAwT/</data>
<key>aDate</key><date>2024-02-29T12:34:56Z</date>
<key>aReal</key><real>3.25</real>
<key>anInteger</key><integer>9007199254740993</integer>
<key>aString</key><string>caf&#233; &amp; more</string>
<key>aBool</key><true/>'

# One JSON field of a lume-metal --format json document (cJSON's layout: "name":<tab>value).
json_field() {
  printf '%s\n' "$1" | sed -n "s/^[[:space:]]*\"$2\":[[:space:]]*\(.*\)$/\1/p" | head -n 1 | sed 's/,$//'
}

# Refused cases: each leaves the file (and the journal) as it was. n counts them.
n=0
# expect_refused NAME FILE-TO-WATCH ACTION... : runs `host ACTION` on the case's dirs.
expect_refused() {
  local name=$1 watch=$2 action=$3 dir="$T/$1/prefs" state="$T/$1/state" out rc=0 journal_before=""
  cp -a "$watch" "$T/$name.orig" 2>/dev/null || cp -a "$watch" "$T/$name.orig"
  [ -f "$state/state.json" ] && journal_before=$(cat "$state/state.json")
  out=$("$LM" host "$action" --prefs-dir "$dir" --state-dir "$state" --format json 2>"$T/$name.err") || rc=$?
  [ "$rc" = 1 ] || fail "$name: host $action exited $rc, expected 1: $out"
  case "$out" in *'"ok":'*false*) ;; *) fail "$name: JSON output lacks \"ok\": false: $out" ;; esac
  grep -qF "$watch" "$T/$name.err" || grep -qF "$(dirname "$watch")" "$T/$name.err" \
    || fail "$name: the message does not name the file: $(cat "$T/$name.err")"
  if [ -d "$watch" ]; then
    diff -r "$watch" "$T/$name.orig" >/dev/null || fail "$name: $watch changed"
  else
    cmp -s "$watch" "$T/$name.orig" || fail "$name: $watch changed"
  fi
  if [ -n "$journal_before" ]; then
    [ "$(cat "$state/state.json")" = "$journal_before" ] || fail "$name: the journal changed"
  fi
  # Nothing else was written next to it.
  if [ -d "$dir" ]; then
    [ -z "$(find "$dir" -name '.*tmp-*')" ] || fail "$name: temporary files left in $dir"
  fi
  n=$((n + 1))
  echo "ok: $name (host $action): $(head -c 160 "$T/$name.err")"
}

setup_file() { # name, then content on stdin
  mkdir -p "$T/$1/prefs"
  cat > "$T/$1/prefs/$DOMAIN.plist"
}
file_of() { echo "$T/$1/prefs/$DOMAIN.plist"; }
