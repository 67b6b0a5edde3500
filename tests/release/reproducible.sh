#!/usr/bin/env bash
# scripts/release.sh as a release is made: the same commit built twice (other scratch and output
# directories, other umask) gives files with the same SHA-256; the source tarball holds exactly
# git's files less Formula/, owned by 0/0 with the mtime SOURCE_DATE_EPOCH; the guest bundle's
# files match its manifest. Then, in a clone: a release refuses an undated CHANGELOG and an
# example Action pinned elsewhere; a dated, pinned one writes its URL and SHA-256 into the formula,
# and the tarball built from the commit carrying that formula is the same file.
. "$(dirname "$0")/../support/lm_test.sh"
: "${LM_SOURCE_DIR:?LM_SOURCE_DIR: the source tree (a git checkout)}"
lm_test_scratch release
src=$LM_SOURCE_DIR
version=$(sed -n 's/^project(lume-metal VERSION \([0-9.]*\) .*/\1/p' "$src/CMakeLists.txt")
name=lume-metal-$version
bundle=$name-bundle-darwin-universal
mkdir -p "$T/tmp1" "$T/tmp2"

note "the same commit twice: the same bytes"
(umask 022; TMPDIR=$T/tmp1 "$src/scripts/release.sh" --snapshot --out "$T/a" HEAD) >"$T/a.log" 2>&1 || fail "release: $(cat "$T/a.log")"
(umask 077; TMPDIR=$T/tmp2 "$src/scripts/release.sh" --snapshot --out "$T/b" HEAD) >"$T/b.log" 2>&1 || fail "release: $(cat "$T/b.log")"
cmp "$T/a/SHA256SUMS" "$T/b/SHA256SUMS" || fail "SHA256SUMS differ: $(cat "$T/a/SHA256SUMS" "$T/b/SHA256SUMS")"
(cd "$T/b" && sha256sum --strict -c SHA256SUMS) >/dev/null || fail "SHA256SUMS does not verify: $(cat "$T/b/SHA256SUMS")"
[ "$(cut -d' ' -f3 "$T/a/SHA256SUMS" | tr '\n' ' ')" = "$name.tar.gz $bundle.tar.gz " ] ||
  fail "SHA256SUMS lists: $(cat "$T/a/SHA256SUMS")"
sha256sum "$T/a/$name.tar.gz" "$T/a/$bundle.tar.gz" | sed "s|$T/a/||"

note "the source tarball: git's files at HEAD less Formula/, 0/0, SOURCE_DATE_EPOCH"
diff <(tar -tzf "$T/a/$name.tar.gz" | grep -v '/$' | sed "s|^$name/||" | sort) \
  <(git -C "$src" ls-tree -r --name-only HEAD | grep -v '^Formula/' | sort) >"$T/files.diff" ||
  fail "files differ from git's: $(cat "$T/files.diff")"
epoch=$(git -C "$src" log -1 --format=%ct HEAD -- . ':(exclude)Formula')
tar --numeric-owner --full-time -tvzf "$T/a/$name.tar.gz" >"$T/list"
[ -z "$(awk '$2 != "0/0"' "$T/list")" ] || fail "entries not owned by 0/0: $(awk '$2 != "0/0"' "$T/list" | head)"
when=$(date -u -d "@$epoch" '+%Y-%m-%d %H:%M:%S')
[ -z "$(awk -v w="$when" '$4 " " $5 != w' "$T/list")" ] || fail "entries not dated $when: $(awk -v w="$when" '$4 " " $5 != w' "$T/list" | head)"
[ "$(grep -c "^-rwxr-xr-x .* $name/scripts/release.sh$" "$T/list")" -eq 1 ] || fail "modes: $(grep release.sh "$T/list")"

note "the guest bundle: every file as its manifest says"
mkdir -p "$T/bundle" && tar -C "$T/bundle" -xzf "$T/a/$bundle.tar.gz"
m=$T/bundle/$bundle/manifest.json
[ "$(jq -r .platform "$m")" = darwin-universal ] && [ "$(jq -r .bundle_version "$m")" = "$version" ] || fail "manifest: $(cat "$m")"
jq -r '.files[] | "\(.sha256)  \(.name)"' "$m" >"$T/bundle/sums"
(cd "$T/bundle/$bundle" && sha256sum --strict -c "$T/bundle/sums") >/dev/null || fail "the bundle does not match its manifest"

note "the bundle's slices, in its manifest and the release notes: no arm64e from the cross-build, and what that means"
jq -e '.slices == {"LumeMetalShim.dylib": ["arm64", "x86_64"], "metal-capabilities": ["arm64", "x86_64"]}' "$m" >/dev/null &&
  jq -e '.arm64e | startswith("missing: with SIP off, arm64e programs")' "$m" >/dev/null || fail "manifest slices: $(cat "$m")"
n=$T/a/RELEASE-NOTES.md
grep -qx "# lume-metal $version" "$n" && grep -qx -- "- LumeMetalShim.dylib: arm64, x86_64" "$n" &&
  grep -qx -- "- metal-capabilities: arm64, x86_64" "$n" && grep -q "^arm64e: missing: with SIP off, arm64e programs" "$n" &&
  grep -q "^## \[" "$src/CHANGELOG.md" || fail "release notes: $(cat "$n")"
cmp "$n" "$T/b/RELEASE-NOTES.md" || fail "the release notes differ between two builds"

note "a release: dated CHANGELOG and pinned Action required; the formula gets its URL and hash"
git clone -q --shared --no-checkout "$src" "$T/repo"
git -C "$T/repo" checkout -q "$(git -C "$src" rev-parse HEAD)"
cd "$T/repo"
sed -i "s/^## \[$version\] .*/## [$version] - unreleased/" CHANGELOG.md
git -c user.name=t -c user.email=t@t commit -q --allow-empty -am "undated"
set +e; scripts/release.sh --out "$T/r0" >"$T/r0.log" 2>&1; rc=$?; set -e
[ "$rc" -ne 0 ] && grep -q "CHANGELOG.md at HEAD has no dated heading '## \[$version\] - YYYY-MM-DD'" "$T/r0.log" ||
  fail "an undated CHANGELOG was released: $(cat "$T/r0.log")"
sed -i "s/^## \[$version\] .*/## [$version] - 2026-12-01/" CHANGELOG.md
sed -i "s|examples/github-action@v[0-9.]*|examples/github-action@v0.0.1|" examples/github-action/workflow.yml
git -c user.name=t -c user.email=t@t commit -q -am "dated, pinned elsewhere"
set +e; scripts/release.sh --out "$T/r1" >"$T/r1.log" 2>&1; rc=$?; set -e
[ "$rc" -ne 0 ] && grep -q "workflow.yml at HEAD is not pinned to @v${version%%.*}: a release's examples use its moving major tag" "$T/r1.log" || fail "a wrong pin was released: $(cat "$T/r1.log")"
sed -i "s|examples/github-action@v0.0.1|examples/github-action@v${version%%.*}|" examples/github-action/workflow.yml
git -c user.name=t -c user.email=t@t commit -q -am "pinned"
TMPDIR=$T/tmp1 scripts/release.sh --formula --out "$T/r2" >"$T/r2.log" 2>&1 || fail "release: $(cat "$T/r2.log")"
sha=$(awk -v f="$name.tar.gz" '$2 == f { print $1 }' "$T/r2/SHA256SUMS")
grep -qx "  url \"https://github.com/lume-metal/lume-metal/releases/download/v$version/$name.tar.gz\"" Formula/lume-metal.rb &&
  grep -qx "  sha256 \"$sha\"" Formula/lume-metal.rb || fail "formula: $(cat Formula/lume-metal.rb)"
ruby -c Formula/lume-metal.rb >/dev/null || fail "the formula with its URL is not Ruby"
git -c user.name=t -c user.email=t@t commit -q -am "formula for v$version"
TMPDIR=$T/tmp2 scripts/release.sh --out "$T/r3" >"$T/r3.log" 2>&1 || fail "release: $(cat "$T/r3.log")"
cmp "$T/r2/SHA256SUMS" "$T/r3/SHA256SUMS" || fail "the formula's commit changed the tarball: $(cat "$T/r2/SHA256SUMS" "$T/r3/SHA256SUMS")"
echo "release: reproducible, complete, and its formula names it"
