#!/usr/bin/env bash
# manual_recipe.sh VM ADDRESS WORKDIR: the documented manual recipe for one VM, scripted as a user
# would with OpenSSH's ssh/scp and curl, doing the checks lume-metal does: stop, the preference
# written and read back, start, wait for SSH, mkdir, copy, SHA-256 on both sides, the probe stock
# and shimmed, compare. One connection per command, as the recipe does. Part of bench-enable (one
# VM against `enable`, and 16-wide with `xargs -P16` against `enable --jobs 16`).
# From the environment: LUME_METAL_LUME_URL (the manager), LM_BUNDLE_DIR (the shim and probe),
# MANUAL_KNOWN_HOSTS (known_hosts of the recipe's own), SSH_ASKPASS and SSH_ASKPASS_REQUIRE (the
# password: openssh.sh's openssh_askpass).
# Exits non-zero, saying why on stderr, when a check fails.
set -eu # no pipefail: `grep -q` ends its pipe early by design
vm=$1 addr=$2 work=$3
fail() { echo "manual recipe, $vm: $*" >&2; exit 1; }
. "$(dirname "$0")/openssh.sh"
openssh_opts "$MANUAL_KNOWN_HOSTS"
rssh() { setsid -w ssh "${sshopts[@]}" "lume@$addr" "$@" </dev/null; }
bundle=$LM_BUNDLE_DIR
shim=$(jq -r .shim "$bundle/manifest.json")
probe=$(jq -r .probe "$bundle/manifest.json")
plist="$work/$vm-prefs.plist"
dest=/Users/lume/.local/share/lume/metal-capabilities
curl -fsS -X POST "$LUME_METAL_LUME_URL/lume/vms/$vm/stop" >/dev/null                   # lume stop my-vm
cat >"$work/$vm-pref.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict><key>ForceUnrestrictedDeviceFeatureLevel</key><true/></dict></plist>
XML
plistutil -i "$work/$vm-pref.xml" -o "$plist" -f bin                                     # defaults write
plistutil -i "$plist" -o - | grep -q '<true/>' || fail "defaults read"                   # defaults read
curl -fsS -X POST -d '{"noDisplay":true}' "$LUME_METAL_LUME_URL/lume/vms/$vm/run" >/dev/null
# As a user polls: the manager's answer until it says SSH is available (each answer is Lume's own
# 2-second check of port 22 while the guest is silent).
until curl -fsS "$LUME_METAL_LUME_URL/lume/vms/$vm" | jq -e '.sshAvailable == true' >/dev/null; do sleep 0.05; done
rssh mkdir -p "$dest"
setsid -w scp -q "${sshopts[@]}" "$bundle/$shim" "$bundle/$probe" "lume@$addr:$dest/" </dev/null
local_sums=$(cd "$bundle" && sha256sum "$shim" "$probe" | awk '{print $1}')
remote_sums=$(rssh "cd $dest && sha256sum $shim $probe" | awk '{print $1}')
[ "$local_sums" = "$remote_sums" ] || fail "SHA-256 differ"
stock=$(rssh "$dest/$probe 1009")
shimmed=$(rssh "LD_PRELOAD=$dest/$shim LUME_METAL_APPLE_FAMILY_MAX=1009 $dest/$probe 1009")
echo "$stock" | grep -qx supports_family=false && echo "$shimmed" | grep -qx supports_family=true || fail "family"
echo "$stock" | grep -qx max_threadgroup_memory=32768 && echo "$shimmed" | grep -qx max_threadgroup_memory=65536 ||
  fail "threadgroup memory"
