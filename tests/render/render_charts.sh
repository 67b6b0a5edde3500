#!/usr/bin/env bash
# The pictures lume-metal publishes, rendered in headless Chromium and checked (render.mjs):
# `bench compare --markdown` and `--svg` over the evidence folders kept in docs/evidence/ (Cua's
# published runs), and docs/bench-enable.svg. One browser for the three. The PNGs stay in $1.
#   render_charts.sh OUT_DIR LUME_METAL NODE
set -euo pipefail
out=$1 lm=$2 node=$3
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
rm -rf "$out" && mkdir -p "$out"
# The folders as docs/bench.md's commands name them (relative, from the top of the tree).
cd "$top"
"$lm" bench compare --markdown --svg "$out/bench-compare.svg" docs/evidence/* >"$out/bench-compare.md"
exec "$node" "$here/render.mjs" --out "$out" "$out/bench-compare.md" "$out/bench-compare.svg" docs/bench-enable.svg
