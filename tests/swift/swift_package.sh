#!/usr/bin/env bash
# The Swift package (examples/swift) built against the installed prefix (tests/embed's) through
# pkg-config, as Lume would build it, and its tests run against the Lume simulator: enable, status,
# rollback, an unknown VM, cancelled enables, several VMs, and Lume's side (docs/embedding.md,
# "Swift"). Then the host and the guests are checked to be exactly as they were.
# swift_package.sh test   (environment: see tests/swift/CMakeLists.txt; LM_SWIFT_SANITIZE=address:
# built and run under ASan, whose leak check then covers every result the library hands out)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../e2e/lib.sh"
: "${LM_PREFIX:?}" "${LM_SWIFT:?}" "${LM_SWIFTC:?}" "${LM_PACKAGE:?}" "${LM_SCRATCH:?}"
what=$1
pcdir=$(dirname "$(find "$LM_PREFIX" -name lume-metal.pc | head -n 1)")
[ -f "$pcdir/lume-metal.pc" ] || fail "no lume-metal.pc under $LM_PREFIX"
export PKG_CONFIG_PATH=$pcdir
libdir=$(pkg-config --variable=libdir lume-metal)
note "$("$LM_SWIFT" --version 2>&1 | head -n 1)"

case $what in
test) ;;
*) fail "usage: swift_package.sh test" ;;
esac

# Where the library keeps things when it is told nothing (as Lume tells it nothing): the state under
# XDG_STATE_HOME, the preference in ~/Library/Preferences (host/lib/prefs/store.c off macOS).
export XDG_STATE_HOME=$E2E_DIR/xdg-state
export LUME_METAL_STATE_DIR=$XDG_STATE_HOME/lume-metal
export LUME_METAL_PREFS_DIR=$HOME/Library/Preferences
mkdir -p "$LUME_METAL_PREFS_DIR"
PLIST=$LUME_METAL_PREFS_DIR/com.apple.gpusw.ParavirtualizedGraphics.plist
# A domain with a key of somebody else's: rollback must give this file back byte for byte.
printf '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n<plist version="1.0"><dict><key>SomebodyElses</key><integer>42</integer></dict></plist>\n' >"$E2E_DIR/seed.xml"
plistutil -i "$E2E_DIR/seed.xml" -o "$PLIST" -f bin || fail "plistutil could not write the seed"
cp "$PLIST" "$E2E_DIR/seed.plist"

sim_start --vm vm1 --vm vm2
export LM_SWIFT_PLIST=$PLIST
export LM_SWIFT_GUEST_HOMES="vm1=$(guest_home vm1):vm2=$(guest_home vm2)"

# Warnings are errors, as the C build's -Werror.
flags=(--package-path "$LM_PACKAGE" --scratch-path "$LM_SCRATCH" -Xswiftc -warnings-as-errors
  -Xlinker -rpath -Xlinker "$libdir")
if [ -n "${LM_SWIFT_SANITIZE:-}" ]; then
  flags+=(--sanitize="$LM_SWIFT_SANITIZE")
  # LeakSanitizer at exit, its reports in files read below; full stacks (the slow unwinder: the
  # installed library is built without frame pointers). XCTest itself leaves some of its own
  # objects at exit (XCTMain's), so a leak fails the run when its stack passes through the
  # library or LumeMetalKit: a result the library handed out and nobody freed.
  export ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0:log_path=$E2E_DIR/asan
  export LSAN_OPTIONS=exitcode=0
fi
"$LM_SWIFT" build --build-tests "${flags[@]}" >"$E2E_DIR/build.log" 2>&1 ||
  fail "swift build failed: $(tail -n 40 "$E2E_DIR/build.log")"
note "built: $(grep -c . "$E2E_DIR/build.log") lines of build output"
set +e
"$LM_SWIFT" test --skip-build "${flags[@]}" >"$E2E_DIR/test.log" 2>&1; rc=$?
set -e
cat "$E2E_DIR/test.log"
# Kept beside the build (LM_SCRATCH.log), whatever the outcome: .ci/debian13 prints it in CI's log.
{ "$LM_SWIFT" --version 2>&1 | head -n 1; echo "swift build --build-tests ${flags[*]}: passed"
  echo "swift test --skip-build ${flags[*]}: exit $rc"; cat "$E2E_DIR/test.log"; } >"$LM_SCRATCH.log"
[ $rc -eq 0 ] || fail "swift test exited $rc"
grep -Eq "Executed [0-9]+ tests?, with 0 failures" "$E2E_DIR/test.log" || fail "swift test did not say every test passed"
if [ -n "${LM_SWIFT_SANITIZE:-}" ]; then
  # Each report's blocks, one per leak ("Direct leak of N byte(s) in M object(s) allocated from:"
  # and its frames, up to a blank line): those through liblume-metal or LumeMetalKit are ours.
  cat "$E2E_DIR"/asan.* >"$E2E_DIR/asan.all" 2>/dev/null || : >"$E2E_DIR/asan.all"
  ! grep -q "ERROR: AddressSanitizer" "$E2E_DIR/asan.all" || fail "AddressSanitizer: $(head -n 40 "$E2E_DIR/asan.all")"
  # (LumeMetalKit's own frames: its sources, or Swift's mangled names of its module, "$s12LumeMetalKit",
  # not the tests' "$s17LumeMetalKitTests".)
  awk 'BEGIN { RS = "" } /leak of/ && /(liblume-metal|Sources\/LumeMetalKit\/|\$s12LumeMetalKit| in lm_[a-z0-9_]+)/' \
    "$E2E_DIR/asan.all" >"$E2E_DIR/ours"
  [ ! -s "$E2E_DIR/ours" ] || fail "leaks of the library's results: $(head -n 60 "$E2E_DIR/ours")"
  note "LeakSanitizer: $(grep -c 'leak of' "$E2E_DIR/asan.all") leaks at exit, none through liblume-metal or LumeMetalKit (XCTest's own: $(grep -m 1 SUMMARY "$E2E_DIR/asan.all" || echo none))"
fi

# As it was: the preference file byte for byte, no guest files, nothing in the journal.
cmp -s "$PLIST" "$E2E_DIR/seed.plist" || fail "the preference file is not as it was: $(plist_xml)"
for vm in vm1 vm2; do
  [ ! -e "$(guest_home $vm)/.local/share/lume-metal" ] || fail "guest files left in $vm"
done
echo "ok: the Swift package built against the installed library and its tests passed; the host and the guests are as they were"
