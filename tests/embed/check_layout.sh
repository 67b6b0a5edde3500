#!/usr/bin/env bash
# check_layout.sh PREFIX DOCS: every installed path the docs name (/usr/local/share/lume-metal/...,
# the default prefix) is in the installed (and moved) PREFIX; a script there is executable.
. "$(dirname "$0")/../support/lm_test.sh"
prefix=$1 docs=$2
mapfile -t paths < <(grep -ohE '/usr/local/share/lume-metal/[A-Za-z0-9._/-]+' "$docs"/*.md | sed 's/[.]$//' | sort -u)
[ "${#paths[@]}" -gt 0 ] || fail "no /usr/local/share/lume-metal/... path in $docs: nothing to check"
for p in "${paths[@]}"; do
  f=$prefix/${p#/usr/local/}
  [ -e "$f" ] || fail "the docs name $p, but the installed tree has no ${p#/usr/local/}"
  case $f in *.sh) [ -x "$f" ] || fail "$f is not executable" ;; esac
  echo "ok: $p"
done
