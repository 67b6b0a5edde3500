#!/usr/bin/env bash
# Issue 49: a preferences file nested past 512 arrays and dictionaries (macOS's own limit), XML or
# binary, is refused naming the file, which is left as it is: never a crash (50,000 deep overflowed
# the stack in libplist's recursion, in every command that read it). 512 is read and kept.
source "$(dirname "$0")/cli_lib.sh" "$@"

# A binary plist of N levels: the root dictionary {"Deep": [[...]]}, 4-byte offsets and references
# (the layout of lm_test_deep_plist in tests/support/lm_test.c).
deep_bin() {
  local arrays=$(( $1 - 1 )) i out
  be32() { printf -v B '\\x%02x\\x%02x\\x%02x\\x%02x' $(( $1 >> 24 & 255 )) $(( $1 >> 16 & 255 )) $(( $1 >> 8 & 255 )) $(( $1 & 255 )); }
  out='bplist00\xd1\0\0\0\x01\0\0\0\x02\x54Deep'
  for (( i = 0; i < arrays; i++ )); do
    if (( i + 1 < arrays )); then be32 $(( 3 + i )); out+="\xa1$B"; else out+='\xa0\0\0\0\0'; fi
  done
  out+='\0\0\0\x08\0\0\0\x11'
  for (( i = 0; i < arrays; i++ )); do be32 $(( 22 + i * 5 )); out+=$B; done
  be32 $(( arrays + 2 )); out+="\0\0\0\0\0\0\x04\x04\0\0\0\0$B\0\0\0\0\0\0\0\0\0\0\0\0"
  be32 $(( 22 + arrays * 5 )); out+=$B
  printf "$out"
}
deep_xml() {
  printf '<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>Deep</key>'
  printf "%$(( $1 - 1 ))s" '' | sed 's/ /<array>/g'
  printf "%$(( $1 - 1 ))s" '' | sed 's/ /<\/array>/g'
  printf '</dict></plist>\n'
}
deep_xml 50000 | setup_file deep-xml
expect_refused deep-xml "$(file_of deep-xml)" enable
grep -q 'more than 512 deep' "$T/deep-xml.err" || fail "deep-xml: the message does not say what is wrong"
deep_bin 50000 | setup_file deep-binary-50000
expect_refused deep-binary-50000 "$(file_of deep-binary-50000)" enable
deep_bin 513 | setup_file deep-binary
expect_refused deep-binary "$(file_of deep-binary)" enable
expect_refused deep-binary "$(file_of deep-binary)" status
# 512 levels: read, and kept exactly through enable and disable.
deep_bin 512 | setup_file deep-512
"$LM" host enable --prefs-dir "$T/deep-512/prefs" --state-dir "$T/deep-512/state" >/dev/null \
  || fail "deep-512: host enable refused 512 levels"
"$LM" host disable --prefs-dir "$T/deep-512/prefs" --state-dir "$T/deep-512/state" >/dev/null \
  || fail "deep-512: host disable failed"
deep_bin 512 > "$T/deep-512.orig"
[ "$(xml_of "$(file_of deep-512)")" = "$(xml_of "$T/deep-512.orig")" ] || fail "deep-512: not kept exactly"
echo "ok: deep-512 (host enable, disable): kept"
echo "all $n nested cases refused"
