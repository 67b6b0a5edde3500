#!/usr/bin/env bash
# Builds a release's files from a commit, byte for byte the same wherever and whenever it runs
# (docs/releasing.md):
#
#   scripts/release.sh [--snapshot] [--out DIR] [--formula] [REF]     (REF: default HEAD)
#
#   DIR/lume-metal-VERSION.tar.gz                        the sources at REF (git archive), less
#                                                        Formula/ (the tap's, which names this file's hash)
#   DIR/lume-metal-VERSION-bundle-darwin-universal.tar.gz the macOS guest bundle (shim, probe,
#                                                        profiles, manifest.json), cross-built from them
#   DIR/SHA256SUMS                                       both, in `sha256sum -c` format
#   DIR/RELEASE-NOTES.md                                 the GitHub release's text: CHANGELOG.md's
#                                                        section, the bundle's slices and what a
#                                                        missing arm64e slice means (from its manifest)
#
# VERSION is project()'s in REF's CMakeLists.txt. Reproducible: every entry's mtime is
# SOURCE_DATE_EPOCH (default: the committer time of the last commit at REF that changed anything
# outside Formula/), owner and group 0/root, modes from git (0644 or 0755), names sorted, gzip
# without name or time. A release (without --snapshot) also requires REF's CHANGELOG.md to date
# the version (`## [VERSION] - YYYY-MM-DD`) and the example Actions to be pinned to the moving major
# tag vMAJOR, which the release moves to vVERSION (docs/releasing.md).
# --formula writes the source tarball's URL and SHA-256 into Formula/lume-metal.rb of the work
# tree (commit that, then tag it vVERSION: the tarball is the same from either commit).
# Needs git, GNU tar, gzip, sha256sum, jq and what the guest cross-build needs (.ci/install-deps).
set -euo pipefail
export LC_ALL=C TZ=UTC

die() { echo "release: $*" >&2; exit 1; }
usage() { die "usage: scripts/release.sh [--snapshot] [--out DIR] [--formula] [REF]"; }

root=$(cd "$(dirname "$0")/.." && pwd)
snapshot=0 formula=0 out=$root/dist ref=HEAD
while [ $# -gt 0 ]; do
  case $1 in
    --snapshot) snapshot=1 ;;
    --formula) formula=1 ;;
    --out) [ $# -ge 2 ] || usage; out=$2; shift ;;
    -*) usage ;;
    *) ref=$1 ;;
  esac
  shift
done
tar --version 2>/dev/null | grep -q 'GNU tar' || die "GNU tar is needed (--sort, --mtime, --owner; macOS: brew install gnu-tar, then put gtar first on PATH as tar)"
cd "$root"
commit=$(git rev-parse --verify -q "$ref^{commit}") || die "$ref is not a commit of $root"
version=$(git show "$commit:CMakeLists.txt" | sed -n 's/^project(lume-metal VERSION \([0-9]*\.[0-9]*\.[0-9]*\) .*/\1/p')
[ -n "$version" ] || die "no 'project(lume-metal VERSION X.Y.Z ...)' in CMakeLists.txt at $ref"
tag=v$version
major_tag=v${version%%.*}

if [ $snapshot -eq 0 ]; then
  # grep reads to the end (no -q): with pipefail, git's write after an early exit is a SIGPIPE,
  # which failed a dated CHANGELOG now and then.
  git show "$commit:CHANGELOG.md" | grep -E "^## \[$version\] - [0-9]{4}-[0-9]{2}-[0-9]{2}$" >/dev/null ||
    die "CHANGELOG.md at $ref has no dated heading '## [$version] - YYYY-MM-DD': date the release there first (--snapshot builds without)"
  for wf in workflow.yml workflow-local.yml; do
    ! git show "$commit:examples/github-action/$wf" | grep -E 'examples/github-action@' | grep -v "@$major_tag\$" >/dev/null ||
      die "examples/github-action/$wf at $ref is not pinned to @$major_tag: a release's examples use its moving major tag"
  done
fi

# Everything outside Formula/: the formula commit after the hash is known changes nothing here.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct "$commit" -- . ':(exclude)Formula')}
[[ $SOURCE_DATE_EPOCH =~ ^[0-9]+$ ]] || die "SOURCE_DATE_EPOCH '$SOURCE_DATE_EPOCH' is not a number of seconds"

work=$(mktemp -d "${TMPDIR:-/tmp}/lume-metal-release.XXXXXX")
trap 'rm -rf "$work"' EXIT
src=lume-metal-$version
bundle=lume-metal-$version-bundle-darwin-universal

# tar_dir DIR NAME OUT: DIR's contents as NAME/... in OUT, reproducibly.
tar_dir() {
  tar -C "$1" --transform "s|^\\.|$2|" --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 \
    --numeric-owner --mode='u+rwX,go+rX,go-w' --format=gnu -cf - . | gzip -9n >"$3"
}

echo "release: $src from $(git rev-parse --short "$commit") (SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH)"
mkdir -p "$work/src"
git archive --format=tar "$commit" -- . ':(exclude)Formula' | tar -C "$work/src" -xf -
# Modes as git records them (0755 or 0644), whatever this machine's umask did on extraction.
find "$work/src" -type d -exec chmod 0755 {} +
find "$work/src" -type f -perm -u+x -exec chmod 0755 {} +
find "$work/src" -type f ! -perm -u+x -exec chmod 0644 {} +

# The guest bundle, cross-built from exactly those sources (the bundle's rules come with the
# host part; only the bundle's target is built), tests and benchmarks off.
cmake -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DLUME_METAL_TESTS=OFF -DLUME_METAL_BENCHMARKS=OFF -DLUME_METAL_GUEST_MACHO=ON >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; die "configuring the guest build failed"; }
cmake --build "$work/build" --target bundle-darwin-universal -j2 >"$work/build.log" 2>&1 ||
  { tail -n 40 "$work/build.log" >&2; die "building the guest bundle failed"; }
bundle_dir=$work/build/share/lume-metal/bundles/darwin-universal
[ -f "$bundle_dir/manifest.json" ] || die "the build made no darwin-universal bundle"

mkdir -p "$out"
rm -f "$out/$src.tar.gz" "$out/$bundle.tar.gz" "$out/SHA256SUMS" "$out/RELEASE-NOTES.md"
tar_dir "$work/src" "$src" "$out/$src.tar.gz"
tar_dir "$bundle_dir" "$bundle" "$out/$bundle.tar.gz"
(cd "$out" && sha256sum "$src.tar.gz" "$bundle.tar.gz" >SHA256SUMS)
cat "$out/SHA256SUMS"

# The release's text: what CHANGELOG.md says of this version, then what the guest bundle holds,
# read from its manifest: which slices its shim and probe have, and what a missing arm64e slice
# means for the user (docs/releasing.md).
m=$bundle_dir/manifest.json
jq -e '.slices and .arm64e' "$m" >/dev/null || die "the bundle's manifest does not name its slices"
{
  echo "# lume-metal $version"
  echo
  git show "$commit:CHANGELOG.md" | awk -v v="$version" '
    index($0, "## [" v "]") == 1 { on = 1; next }
    on && /^## \[/ { exit }
    on { print }' | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' # without its trailing blank lines
  echo
  echo "## The guest bundle"
  echo
  echo "\`$bundle.tar.gz\` is ready to use (\`lume-metal enable --bundle DIR\` takes it unpacked). Its slices:"
  echo
  jq -r '.slices | to_entries[] | "- \(.key): \(.value | join(", "))"' "$m"
  echo
  echo "arm64e: $(jq -r .arm64e "$m")."
  echo
  echo "Check the downloads with \`sha256sum -c SHA256SUMS\` (or \`shasum -a 256 -c SHA256SUMS\`)."
} >"$out/RELEASE-NOTES.md"

if [ $formula -eq 1 ]; then
  sha=$(sed -n "s/^\\([0-9a-f]\\{64\\}\\)  $src\\.tar\\.gz\$/\\1/p" "$out/SHA256SUMS")
  f=$root/Formula/lume-metal.rb
  # The stable url and sha256 right after homepage, replacing any earlier release's.
  awk -v url="https://github.com/lume-metal/lume-metal/releases/download/$tag/$src.tar.gz" -v sha="$sha" '
    /^  (url|sha256) "/ { next }
    { print }
    /^  homepage "/ { printf "  url \"%s\"\n  sha256 \"%s\"\n", url, sha; done = 1 }
    END { if (!done) exit 1 }' "$f" >"$f.new" || { rm -f "$f.new"; die "$f has no 'homepage' line to put the url after"; }
  mv "$f.new" "$f"
  echo "release: $f now names $tag/$src.tar.gz ($sha)"
fi
