#!/usr/bin/env bash
# Issue 49: a key holding a NUL. libplist cuts a binary plist's ASCII string there, so `host enable`
# then `host disable` turned {"a": 1, "a\0b": 2, "Keep": "me"} into {"a": 2, "Keep": "me"} and
# called it exact. Keys follow the rule of strings: the file is refused naming it, and left as it
# is, in binary (ASCII, as any writer may store it) and in XML.
source "$(dirname "$0")/cli_lib.sh" "$@"

printf 'bplist00\xd3\0\x01\0\x02\0\x03\0\x04\0\x05\0\x06\x51a\x53a\0b\x54Keep\x10\x01\x10\x02\x52me' > "$T/nul-key.bin"
printf '\0\0\0\x08\0\0\0\x15\0\0\0\x17\0\0\0\x1b\0\0\0\x20\0\0\0\x22\0\0\0\x24' >> "$T/nul-key.bin"
printf '\0\0\0\0\0\0\x04\x02\0\0\0\0\0\0\0\x07\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x27' >> "$T/nul-key.bin"
[ "$(stat -c %s "$T/nul-key.bin")" = 99 ] || fail "nul-key: the test's plist is not 99 bytes"
setup_file nul-key < "$T/nul-key.bin"
expect_refused nul-key "$(file_of nul-key)" enable
grep -q 'NUL character' "$T/nul-key.err" || fail "nul-key: the message does not say what is wrong"
expect_refused nul-key "$(file_of nul-key)" status
printf '<?xml version="1.0"?><plist version="1.0"><dict><key>a</key><integer>1</integer><key>a\0b</key><integer>2</integer><key>Keep</key><string>me</string></dict></plist>' \
  | setup_file nul-key-xml
expect_refused nul-key-xml "$(file_of nul-key-xml)" enable
# The same rule, and the same cut, for a string value: {"x": "a\0b", "Keep": "me"} (1-byte offsets).
printf '\x62\x70\x6c\x69\x73\x74\x30\x30\xd2\x01\x02\x03\x04\x51\x78\x54\x4b\x65\x65\x70\x53\x61\x00\x62\x52\x6d\x65' > "$T/nul-value.bin"
printf '\x08\x0d\x0f\x14\x18\0\0\0\0\0\0\x01\x01\0\0\0\0\0\0\0\x05\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x1b' >> "$T/nul-value.bin"
[ "$(stat -c %s "$T/nul-value.bin")" = 64 ] || fail "nul-value: the test's plist is not 64 bytes"
setup_file nul-value < "$T/nul-value.bin"
expect_refused nul-value "$(file_of nul-value)" enable
echo "all $n cases with a NUL in a key or string refused"
