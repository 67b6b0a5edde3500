#!/usr/bin/env bash
# The GitHub Action's `version` input (examples/github-action/src/install.js): a release installed
# from its source tarball, verified by its SHA256SUMS, built and kept in the runner's tool cache.
# The release is this checkout's HEAD as scripts/release.sh's source tarball is made (git archive,
# less Formula/), served with its SHA256SUMS by an HTTP server on this test's loopback address
# (a port it picks, stopped by PID on exit). A SHA256SUMS that gives the tarball another hash, or
# none, is refused with nothing installed; the right one is installed, used by main and post, put
# on PATH for later steps and found in the tool cache by the next job, which downloads nothing.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/action_lib.sh"
src=$(cd "$here/../.." && pwd)
version=$(sed -n 's/^project(lume-metal VERSION \([0-9]*\.[0-9]*\.[0-9]*\) .*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || fail "no project(lume-metal VERSION ...) in $src/CMakeLists.txt"
name=lume-metal-$version.tar.gz

sim_start --vm vm1 --boot-delay 0 --stop-delay 0
vm_run vm1
export GITHUB_ENV="$E2E_DIR/github_env" RUNNER_TEMP="$E2E_DIR/runner_temp"
mkdir -p "$RUNNER_TEMP"; : >"$GITHUB_ENV"
job() {
  export LM_ACTION_STATE_FILE="$E2E_DIR/$1.state" GITHUB_STEP_SUMMARY="$E2E_DIR/$1.summary"
  : >"$LM_ACTION_STATE_FILE"; : >"$GITHUB_STEP_SUMMARY"
}

# The release files, one folder per SHA256SUMS: right, wrong (another file's hash), naming nothing.
for r in good wrong none; do mkdir -p "$E2E_DIR/www/$r/v$version"; done
git -C "$src" archive --format=tar --prefix="lume-metal-$version/" HEAD -- . ':(exclude)Formula' |
  gzip -9n >"$E2E_DIR/www/good/v$version/$name"
for r in wrong none; do cp "$E2E_DIR/www/good/v$version/$name" "$E2E_DIR/www/$r/v$version/"; done
(cd "$E2E_DIR/www/good/v$version" && sha256sum "$name" >SHA256SUMS)
echo "$(sha256sum <"$src/CMakeLists.txt" | cut -d' ' -f1)  $name" >"$E2E_DIR/www/wrong/v$version/SHA256SUMS"
echo "$(cut -d' ' -f1 <"$E2E_DIR/www/good/v$version/SHA256SUMS")  lume-metal-0.0.0.tar.gz" >"$E2E_DIR/www/none/v$version/SHA256SUMS"

addr=$(lm_test_address 254)
python3 -u -m http.server --bind "$addr" --directory "$E2E_DIR/www" 0 >"$E2E_DIR/http.out" 2>"$E2E_DIR/http.log" &
E2E_MORE_SIMS+=("$!")
wait_for 30 "the HTTP server did not start: $(cat "$E2E_DIR/http.out" "$E2E_DIR/http.log")" \
  grep -q '^Serving HTTP on .* port [0-9]* ' "$E2E_DIR/http.out"
port=$(sed -n 's/^Serving HTTP on .* port \([0-9]*\) .*/\1/p' "$E2E_DIR/http.out")
export no_proxy="$addr" NO_PROXY="$addr"
base="http://$addr:$port"
downloads() { grep -c "\"GET /$1/v$version/" "$E2E_DIR/http.log" || true; }
cached() { [ -n "$(ls -A "$RUNNER_TOOL_CACHE")" ]; }

note "a SHA256SUMS that gives the tarball another hash: refused, nothing installed, nothing enabled"
job j1
step "$E2E_DIR/wrong" main vms=vm1 version="$version" release-url="$base/wrong"
[ "$STEP_RC" -eq 1 ] || fail "a wrong SHA256SUMS: exit $STEP_RC: $(cat "$E2E_DIR/wrong.log")"
good_sum=$(cut -d' ' -f1 <"$E2E_DIR/www/good/v$version/SHA256SUMS")
grep -qF "::error title=lume-metal::$name from $base/wrong/v$version has SHA-256 $good_sum, but its SHA256SUMS says $(cut -d' ' -f1 <"$E2E_DIR/www/wrong/v$version/SHA256SUMS"): refused, nothing installed" "$E2E_DIR/wrong.log" ||
  fail "a wrong SHA256SUMS: $(cat "$E2E_DIR/wrong.log")"
! cached || fail "tool cache after a refused tarball: $(ls -R "$RUNNER_TOOL_CACHE")"
[ ! -s "$GITHUB_PATH" ] && [ ! -s "$LM_ACTION_STATE_FILE" ] || fail "a refused install left PATH or state"
[ ! -e "$(guest_home vm1)/.local/share/lume-metal" ] || fail "vm1 enabled with a refused release"

note "a SHA256SUMS that names no such tarball: refused before it is downloaded"
step "$E2E_DIR/none" main vms=vm1 version="$version" release-url="$base/none"
[ "$STEP_RC" -eq 1 ] && grep -qF "::error title=lume-metal::$base/none/v$version/SHA256SUMS names no $name: nothing installed" "$E2E_DIR/none.log" ||
  fail "SHA256SUMS without the tarball: exit $STEP_RC: $(cat "$E2E_DIR/none.log")"
[ "$(grep -c "\"GET /none/v$version/$name" "$E2E_DIR/http.log" || true)" -eq 0 ] || fail "the tarball was downloaded anyway"
! cached || fail "tool cache after SHA256SUMS without the tarball"

note "the right SHA256SUMS: verified, built, cached; main and post run the installed program"
step "$E2E_DIR/good" main vms=vm1 version="$version" release-url="$base/good"
[ "$STEP_RC" -eq 0 ] || fail "install and enable: exit $STEP_RC: $(tail -n 40 "$E2E_DIR/good.log")"
grep -qF "lume-metal $version: $name verified (SHA-256 $good_sum); building it" "$E2E_DIR/good.log" ||
  fail "not verified: $(cat "$E2E_DIR/good.log")"
installed=$RUNNER_TOOL_CACHE/lume-metal/$version/$(node -p process.arch)   # tool-cache names the arch as node does
[ -x "$installed/bin/lume-metal" ] || fail "not in the tool cache: $(ls -R "$RUNNER_TOOL_CACHE" | head -20)"
grep -qxF "$installed/bin" "$GITHUB_PATH" || fail "GITHUB_PATH: $(cat "$GITHUB_PATH")"
"$installed/bin/lume-metal" --version | grep -qx "lume-metal $version" || fail "the installed program: $("$installed/bin/lume-metal" --version)"
grep -qx "$installed/bin/lume-metal" "$LM_ACTION_STATE_FILE" || fail "post would not run the installed program: $(cat "$LM_ACTION_STATE_FILE")"
expect_output "$E2E_DIR/good" results '{"vm1":"ok"}'
[ -L "$(guest_home vm1)/.local/share/lume-metal/current" ] || fail "vm1 not enabled"
step "$E2E_DIR/pgood" post vms=vm1 version="$version" release-url="$base/good"
[ "$STEP_RC" -eq 0 ] && [ ! -e "$(guest_home vm1)/.local/share/lume-metal" ] || fail "post: $(cat "$E2E_DIR/pgood.log")"
fetched=$(downloads good)

note "the next job: the tool cache has it, nothing is downloaded"
job j2
: >"$GITHUB_PATH"
step "$E2E_DIR/again" main vms=vm1 version="$version" release-url="$base/good" rollback-at-end=false
[ "$STEP_RC" -eq 0 ] && grep -qF "lume-metal $version: from the tool cache ($installed)" "$E2E_DIR/again.log" ||
  fail "second job: exit $STEP_RC: $(cat "$E2E_DIR/again.log")"
[ "$(downloads good)" -eq "$fetched" ] || fail "the second job downloaded again: $(cat "$E2E_DIR/http.log")"
grep -qxF "$installed/bin" "$GITHUB_PATH" || fail "GITHUB_PATH (cached): $(cat "$GITHUB_PATH")"
step "$E2E_DIR/bad" main vms=vm1 version=latest
[ "$STEP_RC" -eq 1 ] && grep -qF "version is 'latest': it is a release's MAJOR.MINOR.PATCH" "$E2E_DIR/bad.log" ||
  fail "version=latest: $(cat "$E2E_DIR/bad.log")"
echo "github action version input: a wrong or missing SHA256SUMS refused, the release verified, built, cached and reused"
