#!/usr/bin/env bash
# Swift sees the whole public API through the installed module map, found as LumeMetalKit finds
# it (pkg-config lume-metal's Cflags): a Swift file that names every function the installed headers
# declare (LM_EXTERN), with `import LumeMetal` and `import LumeMetal.Sys`, type-checks. Then the same
# against a copy of the prefix with a public header left out of the umbrella (lume-metal.h without
# output.h, which no other header includes) must fail, naming one of that header's functions: a
# module map or umbrella that loses a header cannot pass.
# swift_umbrella.sh   (environment: LM_PREFIX, LM_SWIFTC; tests/swift/CMakeLists.txt)
. "$(dirname "$0")/../support/lm_test.sh"
: "${LM_PREFIX:?}" "${LM_SWIFTC:?}"
lm_test_scratch swift-umbrella
work=$T

# typecheck PREFIX LOG: the generated file against that prefix, with pkg-config's flags.
typecheck() {
  local pc
  pc=$(dirname "$(find "$1" -name lume-metal.pc | head -n 1)")
  # shellcheck disable=SC2046 # pkg-config's flags are words
  "$LM_SWIFTC" -typecheck $(PKG_CONFIG_PATH=$pc pkg-config --cflags lume-metal) "$work/every.swift" >"$2" 2>&1
}

# Every function the installed headers declare, by name (as tests/embed/check_exports.sh reads them).
find "$LM_PREFIX/include" -name '*.h' -exec grep -ohE 'LM_EXTERN\([^)]*\)[[:space:]]*lm_[a-z0-9_]+' {} + |
  sed -E 's/.*(lm_[a-z0-9_]+)$/\1/' | sort -u >"$work/functions"
n=$(wc -l <"$work/functions")
[ "$n" -gt 100 ] || fail "only $n functions declared under $LM_PREFIX/include"
{
  echo "import LumeMetal"
  echo "import LumeMetal.Sys"
  echo "func everyFunction() {"
  sed 's/.*/    let _: Any = &/' "$work/functions"
  echo "}"
} >"$work/every.swift"
typecheck "$LM_PREFIX" "$work/good.log" ||
  fail "Swift does not see the whole API through the installed module map: $(grep -m 8 'error:' "$work/good.log" || head -n 20 "$work/good.log")"
note "Swift sees all $n functions through the installed module map ($("$LM_SWIFTC" --version 2>&1 | head -n 1))"

cp -a "$LM_PREFIX" "$work/broken"
umbrella=$work/broken/include/lume-metal.h
grep -q '^#include "lume-metal/output.h"$' "$umbrella" || fail "lume-metal.h does not include lume-metal/output.h"
if grep -l '#include "output.h"' "$work/broken/include/lume-metal/"*.h; then
  fail "another header includes output.h: leaving it out of the umbrella would not lose it"
fi
sed -i '/^#include "lume-metal\/output.h"$/d' "$umbrella"
if typecheck "$work/broken" "$work/broken.log"; then
  fail "the API type-checks with output.h left out of the umbrella: the module map is not what Swift reads"
fi
missing=$(grep -oE "cannot find '(lm_[a-z0-9_]+)' in scope" "$work/broken.log" | grep -oE 'lm_[a-z0-9_]+' | sort -u)
[ -n "$missing" ] || fail "the broken umbrella failed otherwise: $(head -n 20 "$work/broken.log")"
for f in $missing; do
  grep -q "LM_EXTERN([^)]*)[[:space:]]*$f\b" "$work/broken/include/lume-metal/output.h" ||
    fail "$f is missing from Swift with output.h left out, but output.h does not declare it"
done
echo "ok: with output.h left out of the umbrella, Swift does not find: $(echo $missing)"
