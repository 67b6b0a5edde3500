#!/usr/bin/env bash
# The pictures lume-metal publishes, rendered in headless Chromium and checked (render.mjs): the
# charts of each evidence folder's README.md in docs/evidence/ (first checked to be what `bench
# compare --markdown` draws for that folder, so that they cannot drift from the generator), `bench
# compare --markdown` and `--svg` over those folders (Cua's published runs), and
# docs/bench-enable.svg. One browser for all of them. The PNGs stay in OUT_DIR.
#   render_charts.sh OUT_DIR LUME_METAL NODE
set -euo pipefail
out=$1 lm=$2 node=$3
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
rm -rf "$out" && mkdir -p "$out"
# The folders as docs/bench.md's commands name them (relative, from the top of the tree).
cd "$top"
readmes=()
for d in docs/evidence/*/; do
  d=${d%/}
  n=$(($(wc -l <"$d/results.csv") - 1)) # its tests: its own charts come first in compare's output
  "$lm" bench compare --markdown "$d" | awk -v n="$n" '/^```mermaid$/ { k++ } k >= 1 && k <= n && !/^$/' >"$out/want.md"
  awk '/^```mermaid$/ { on = 1 } on && !/^$/ { print } /^```$/ { on = 0 }' "$d/README.md" >"$out/have.md"
  if ! cmp -s "$out/want.md" "$out/have.md"; then
    echo "$d/README.md: its charts are not what \`lume-metal bench compare --markdown $d\` draws now:"
    diff "$out/have.md" "$out/want.md" || true
    exit 1
  fi
  # A copy named after its folder: one PNG each.
  cp "$d/README.md" "$out/$(basename "$d")-README.md"
  readmes+=("$out/$(basename "$d")-README.md")
done
rm -f "$out/want.md" "$out/have.md"
"$lm" bench compare --markdown --svg "$out/bench-compare.svg" docs/evidence/* >"$out/bench-compare.md"
exec "$node" "$here/render.mjs" --out "$out" "${readmes[@]}" "$out/bench-compare.md" "$out/bench-compare.svg" \
  docs/bench-enable.svg
