#!/usr/bin/env bash
# check.sh NAME: one rule of docs/testing.md, checked on the tree (see CMakeLists.txt).
. "$(dirname "$0")/../support/lm_test.sh"
: "${SOURCE_DIR:?}" "${BUILD_DIR:?}" "${CMAKE:?}" "${CTEST:?}" "${WORK_DIR:?}"

# No retries: a test that fails once is a failure (the presets and CI never run it again).
presets_no_retry() {
  local repeats
  repeats=$(jq -c '[.testPresets[]? | select(.execution.repeat != null) | .name]' "$SOURCE_DIR/CMakePresets.json")
  [ "$repeats" = "[]" ] || fail "test presets that repeat failing tests: $repeats (CMakePresets.json)"
  ! grep -nE -- '--repeat|until-pass|--rerun-failed' "$SOURCE_DIR/.ci/run" || fail ".ci/run retries tests"
}

# PASS_REGULAR_EXPRESSION makes CTest ignore the exit code: a crash after the expected line
# would pass. Tests check both through tests/unit/run_cli.cmake instead.
no_pass_regex_only() {
  local found
  found=$("$CTEST" --test-dir "$BUILD_DIR" --show-only=json-v1 |
    jq -r '.tests[] | select([.properties[]? | .name] | index("PASS_REGULAR_EXPRESSION")) | .name')
  [ -z "$found" ] || fail "tests whose exit code CTest ignores (PASS_REGULAR_EXPRESSION): $found"
}

# Timings belong to the benchmarks (tests/bench), which print figures; a test that asserts on
# elapsed time fails on a loaded machine and says nothing about correctness.
no_timing_asserts() {
  local found
  found=$(cd "$SOURCE_DIR" && grep -nE \
      -e 'mono_now\(\) *-' -e 'lm_clock_(monotonic|epoch)\(\) *-' -e 'tv_sec *- *[a-z]+\.tv_sec' \
      -e '\.seconds *[<>]' -e 'SECONDS *- *\$' \
      $(find tests -path tests/bench -prune -o -path tests/hygiene -prune -o \
          \( -name 'test_*.c' -o -name '*.sh' -o -name '*.cmake' \) -type f -print | sort) || true)
  [ -z "$found" ] || fail "timing assertions in tests (move them to a benchmark):
$found"
}

# The loopback address plan (cmake/LumeMetalTesting.cmake): tests run at once (ctest -j) never
# share a /24, since a guest that finds its address taken moves on into another test's. Each net
# is handed out once, each test uses only the nets the plan gave it (from its environment and its
# command line), and no source picks an address of its own outside 127.0.0.0/24 (left for runs
# by hand).
address_plan() {
  local plan=$BUILD_DIR/tests/address-plan.txt found pairs shared t net
  [ -s "$plan" ] || fail "no address plan at $plan"
  found=$(awk '{print $1}' "$plan" | sort | uniq -d)
  [ -z "$found" ] || fail "nets handed out more than once: $found ($plan)"
  pairs=$("$CTEST" --test-dir "$BUILD_DIR" --show-only=json-v1 | jq -r '
      .tests[] | .name as $t
      | ((.command // []) + [.properties[]? | select(.name == "ENVIRONMENT") | .value[]])[]
      | scan("127\\.[0-9]+\\.[0-9]+\\.[0-9]+") | "\($t) \(.)"' |
    awk '{ split($2, o, "."); if (o[2] != 0 || o[3] != 0) print $1, o[1] "." o[2] "." o[3] ".0/24" }' | sort -u)
  [ -n "$pairs" ] || fail "no test uses the plan's addresses: $("$CTEST" --test-dir "$BUILD_DIR" -N | tail -n 1)"
  shared=$(awk '{print $2}' <<<"$pairs" | sort | uniq -d)
  [ -z "$shared" ] || fail "nets used by more than one test:
$(grep -F -f <(printf ' %s\n' $shared) <<<"$pairs")"
  while read -r t net; do
    grep -qxF "$net $t" "$plan" || fail "$t uses $net, which the plan did not give it ($plan)"
  done <<<"$pairs"
  found=$(cd "$SOURCE_DIR" && grep -rnIE '127\.(0\.[1-9][0-9]*|[1-9][0-9]*\.[0-9]+)\.[0-9]+' \
      CMakeLists.txt cmake tests --exclude-dir=corpus || true)
  [ -z "$found" ] || fail "loopback addresses picked by hand (take them from the plan: lm_test_loopback):
$found"
  echo "$(wc -l <"$plan") nets in the plan; $(wc -l <<<"$pairs") used by the registered tests, one test each"
}

# One reader of untrusted lines (issue 51; common/interface/text.h): text from outside -- a
# guest's or a VM manager's output, /proc, a file not ours -- is cut into lines and words by lm_scan
# and its numbers read by lm_text_parse_*, never by strtok (a line reader that skips what it does
# not expect and stops at the first NUL) nor the scanf family (whose numbers overflow into undefined
# behaviour, and whose %s cuts a word silently). One use is allowed, with its reason:
#   common/src/json.c: sscanf(buf, "%lg", ...) reads back the number format_number itself just
#   printed with "%1.15g" (to see whether it needs 17 digits), never text from outside.
one_line_reader() {
  local found
  found=$(cd "$SOURCE_DIR" && grep -rnE '(^|[^A-Za-z0-9_])(strtok|strtok_r|strsep|v?f?scanf|v?sscanf)[[:space:]]*\(' \
      host common --include='*.c' --include='*.h' --include='*.m' |
    grep -vE '^common/src/json\.c:[0-9]+:[[:space:]]*if \(sscanf\(buf, "%lg", &back\) != 1' || true)
  [ -z "$found" ] || fail "strtok or scanf on text in host/ or common/ (cut it with lm_scan and read its numbers with lm_text_parse_*, common/interface/text.h):
$found"
  # the one allowed use is still the round trip it is allowed as
  grep -qE 'sscanf\(buf, "%lg", &back\)' "$SOURCE_DIR/common/src/json.c" ||
    fail "common/src/json.c's number round trip moved: update one_line_reader's allow-list (tests/hygiene/check.sh)"
}

# configure SCRATCH_NAME [cmake args...]: configure the tree afresh in the work directory with the
# Mach-O cross-build's linker made unavailable; output in $WORK_DIR/SCRATCH_NAME.log.
configure() {
  local name=$1; shift
  rm -rf "$WORK_DIR/$name"
  set +e
  "$@" -S "$SOURCE_DIR" -B "$WORK_DIR/$name" ${GENERATOR:+-G "$GENERATOR"} \
    -DLUME_METAL_DARWIN_LD64=/nonexistent/ld64.lld -DLUME_METAL_BENCHMARKS=OFF >"$WORK_DIR/$name.log" 2>&1
  CONFIGURE_RC=$?
  set -e
}

# In CI a part that cannot be built stops the configure, naming it and what to install.
configure_ci_refuses_missing_part() {
  configure ci "$CMAKE" -E env CI=true "$CMAKE" -DLUME_METAL_TESTS=OFF
  [ "$CONFIGURE_RC" -ne 0 ] || fail "CI=true: the configure succeeded without the Mach-O cross-build: $(tail -n 20 "$WORK_DIR/ci.log")"
  grep -q "guest_macho_verify cannot be built here" "$WORK_DIR/ci.log" || fail "$(tail -n 20 "$WORK_DIR/ci.log")"
  grep -q "apt-get install clang-22 lld-22 llvm" "$WORK_DIR/ci.log" || fail "no package named: $(tail -n 20 "$WORK_DIR/ci.log")"
  rm -rf "$WORK_DIR/ci"
}

# Elsewhere it is a registered test that reports itself skipped, with the reason.
configure_skips_missing_part() {
  configure local "$CMAKE" -E env --unset=CI "$CMAKE"
  [ "$CONFIGURE_RC" -eq 0 ] || fail "the configure failed: $(tail -n 20 "$WORK_DIR/local.log")"
  grep -q "guest_macho_verify is not built" "$WORK_DIR/local.log" || fail "no warning: $(tail -n 20 "$WORK_DIR/local.log")"
  local out
  out=$("$CTEST" --test-dir "$WORK_DIR/local" -R '^guest_macho_verify$' -V 2>&1) || fail "$out"
  [[ $out == *"guest_macho_verify (Skipped)"* ]] || fail "not reported as skipped: $out"
  [[ $out == *"skipped: the Mach-O cross-build needs clang-22"* ]] || fail "the reason is not shown: $out"
  rm -rf "$WORK_DIR/local"
}

# A dependency that is there but whose .pc requires a module that is not (libssh2.pc asks for
# libcrypto; Homebrew's openssl@3 is keg-only) names the module really missing and its package,
# never the dependency that is installed (cmake/LumeMetalDependencies.cmake, lm_require_pkg).
configure_names_missing_requirement() {
  local pc="$WORK_DIR/requirement-pc" m
  rm -rf "$pc"
  mkdir -p "$pc"
  for m in libplist-2.0 libcjson; do
    cp "$(pkg-config --path "$m")" "$pc/" || fail "no $m.pc on this machine"
  done
  printf '%s\n' 'prefix=/usr' 'includedir=${prefix}/include' 'Name: libssh2' \
    'Description: a libssh2 whose libcrypto is not on the path' 'Version: 1.11.1' \
    'Requires.private: libcrypto' 'Libs: -lssh2' 'Cflags: -I${includedir}' >"$pc/libssh2.pc"
  configure requirement "$CMAKE" -E env --unset=CI PKG_CONFIG_LIBDIR="$pc" PKG_CONFIG_PATH= "$CMAKE" \
    -DLUME_METAL_TESTS=OFF -DLUME_METAL_GUEST=OFF -DLUME_METAL_GUEST_MACHO=OFF
  [ "$CONFIGURE_RC" -ne 0 ] || fail "the configure succeeded without libcrypto: $(tail -n 20 "$WORK_DIR/requirement.log")"
  grep -q "libcrypto (pkg-config), which libssh2 requires," "$WORK_DIR/requirement.log" ||
    fail "the missing module is not named: $(tail -n 20 "$WORK_DIR/requirement.log")"
  grep -q "sudo apt-get install libssl-dev" "$WORK_DIR/requirement.log" || fail "$(tail -n 20 "$WORK_DIR/requirement.log")"
  grep -q "brew install openssl@3 (keg-only" "$WORK_DIR/requirement.log" || fail "$(tail -n 20 "$WORK_DIR/requirement.log")"
  ! grep -q "apt-get install libssh2-1-dev" "$WORK_DIR/requirement.log" ||
    fail "asks to install libssh2, which is there: $(tail -n 20 "$WORK_DIR/requirement.log")"
  rm -rf "$WORK_DIR/requirement" "$pc"
}

"${1:?usage: check.sh NAME}"
echo "hygiene $1: ok"
