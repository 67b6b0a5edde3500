#!/usr/bin/env bash
# formula_options.sh FORMULA PRESETS: the Homebrew formula builds what CI builds. Every option of
# its MACOS_PRESET_OPTIONS has the value the `macos` preset gives it, and every option of that
# preset is in the formula, except those that say how CI cross-builds from Linux (the formula
# builds natively on a Mac: the host and the guest themselves, not the Mach-O cross-builds).
. "$(dirname "$0")/../support/lm_test.sh"
formula=${1:?usage: formula_options.sh FORMULA PRESETS}
presets=${2:?usage: formula_options.sh FORMULA PRESETS}
cross_only='^(LUME_METAL_HOST_MACHO|LUME_METAL_HOST|LUME_METAL_GUEST|LUME_METAL_GUEST_MACHO)$'

options=$(sed -n '/MACOS_PRESET_OPTIONS = %w\[/,/\]\.freeze/p' "$formula" | grep -o -- '-D[A-Za-z0-9_]*=[^ ]*' || true)
[ -n "$options" ] || fail "$formula: no MACOS_PRESET_OPTIONS"
grep -q '\*MACOS_PRESET_OPTIONS' "$formula" || fail "$formula: install does not pass MACOS_PRESET_OPTIONS"
preset=$(jq -c '.configurePresets[] | select(.name == "macos") | .cacheVariables' "$presets")
[ -n "$preset" ] && [ "$preset" != null ] || fail "$presets: no macos preset"

while IFS= read -r opt; do
  name=${opt#-D}; name=${name%%=*}; value=${opt#*=}
  want=$(jq -r --arg n "$name" '.[$n] // "(absent)"' <<<"$preset")
  [ "$want" = "$value" ] || fail "the formula passes $name=$value, the macos preset $name=$want"
done <<<"$options"
for name in $(jq -r 'keys[]' <<<"$preset"); do
  [[ $name =~ $cross_only ]] && continue
  grep -q -- "-D$name=" <<<"$options" || fail "the macos preset sets $name, the formula does not"
done
echo "formula options: $(wc -l <<<"$options") agree with the macos preset"
