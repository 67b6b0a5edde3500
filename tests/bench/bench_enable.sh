#!/usr/bin/env bash
# Benchmark (figures, not a test): on the Lume simulator with zero boot and stop delays,
#  - a first `lume-metal enable` (restart included) broken down by step,
#  - an idempotent re-enable (median of 10), against one OpenSSH `ssh host true` to the same
#    guest (median of 10),
#  - the documented manual recipe scripted with OpenSSH's ssh/scp and curl doing the same checks
#    (stop, preference written and read back, start, wait for SSH, mkdir, copy, SHA-256 on both
#    sides, probe stock and shimmed, compare), one connection per command as the recipe does,
# side by side in one run, as ratios; then a fleet (bench_fleet.sh): 16 VMs with --jobs 16 against
# one VM, 1 s boot and 0.3 s stop delay, every VM restarted. With LM_BENCH_SVG set, also a chart
# of the run (gnuplot) written there.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench_lib.sh"


sim_start --vm lm-vm --vm manual-vm --boot-delay 0 --stop-delay 0
vm_run lm-vm
vm_run manual-vm
# Both run from before the preference changes: both need a restart (docs/lume-metal.md, "When a VM
# is restarted").

# --- lume-metal, first enable ---
t0=$(now)
lm_json "$E2E_DIR/first.json" enable lm-vm
t1=$(now)
expect_rc 0 "$E2E_DIR/first.json"
first=$(elapsed "$t0" "$t1")

# --- lume-metal, idempotent re-enable ---
for i in $(seq 1 10); do
  t0=$(now); lm_json "$E2E_DIR/again.json" enable lm-vm; t1=$(now)
  expect_rc 0 "$E2E_DIR/again.json"
  elapsed "$t0" "$t1"
done >"$E2E_DIR/again.times"
again=$(median <"$E2E_DIR/again.times")

# --- one OpenSSH connection running `true` in the same guest (what re-enable is held against) ---
lm_addr=$(jq -r '.vms[] | select(.name == "lm-vm") | .address' "$E2E_DIR/sim.json")
printf '#!/bin/sh\necho lume\n' >"$E2E_DIR/askpass"; chmod 700 "$E2E_DIR/askpass"
export SSH_ASKPASS="$E2E_DIR/askpass" SSH_ASKPASS_REQUIRE=force
sshopts=(-o StrictHostKeyChecking=accept-new -o UserKnownHostsFile="$E2E_DIR/manual_known_hosts"
  -o PubkeyAuthentication=no -o PreferredAuthentications=password -o LogLevel=ERROR)
setsid -w ssh "${sshopts[@]}" "lume@$lm_addr" true </dev/null   # its host key recorded first
for i in $(seq 1 10); do
  t0=$(now); setsid -w ssh "${sshopts[@]}" "lume@$lm_addr" true </dev/null; t1=$(now)
  elapsed "$t0" "$t1"
done >"$E2E_DIR/ssh.times"
ssh_true=$(median <"$E2E_DIR/ssh.times")

# --- the manual recipe, scripted ---
bundle=$LM_BUNDLE_DIR
shim=$(jq -r .shim "$bundle/manifest.json"); probe=$(jq -r .probe "$bundle/manifest.json")
addr=$(jq -r '.vms[] | select(.name == "manual-vm") | .address' "$E2E_DIR/sim.json")
rssh() { setsid -w ssh "${sshopts[@]}" "lume@$addr" "$@" </dev/null; }
manual_plist="$E2E_DIR/manual-prefs.plist"
dest=/Users/lume/.local/share/lume/metal-capabilities
t0=$(now)
curl -fsS -X POST "$LUME_METAL_LUME_URL/lume/vms/manual-vm/stop" >/dev/null           # lume stop my-vm
cat >"$E2E_DIR/pref.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict><key>ForceUnrestrictedDeviceFeatureLevel</key><true/></dict></plist>
XML
plistutil -i "$E2E_DIR/pref.xml" -o "$manual_plist" -f bin                              # defaults write
plistutil -i "$manual_plist" -o - | grep -q '<true/>' || fail "manual: defaults read"   # defaults read
curl -fsS -X POST -d '{"noDisplay":true}' "$LUME_METAL_LUME_URL/lume/vms/manual-vm/run" >/dev/null
until curl -fsS "$LUME_METAL_LUME_URL/lume/vms/manual-vm" | jq -e '.sshAvailable == true' >/dev/null; do sleep 0.05; done
rssh mkdir -p "$dest"
setsid -w scp -q "${sshopts[@]}" "$bundle/$shim" "$bundle/$probe" "lume@$addr:$dest/" </dev/null
local_sums=$(cd "$bundle" && sha256sum "$shim" "$probe" | awk '{print $1}')
remote_sums=$(rssh "cd $dest && sha256sum $shim $probe" | awk '{print $1}')
[ "$local_sums" = "$remote_sums" ] || fail "manual: SHA-256 differ"
stock=$(rssh "$dest/$probe 1009")
shimmed=$(rssh "LD_PRELOAD=$dest/$shim LUME_METAL_APPLE_FAMILY_MAX=1009 $dest/$probe 1009")
echo "$stock" | grep -qx supports_family=false && echo "$shimmed" | grep -qx supports_family=true || fail "manual: family"
echo "$stock" | grep -qx max_threadgroup_memory=32768 && echo "$shimmed" | grep -qx max_threadgroup_memory=65536 || fail "manual: memory"
t1=$(now)
manual=$(elapsed "$t0" "$t1")

# --- the fleet: its own simulator (1 s boot, 0.3 s stop), after this one is stopped ---
kill -TERM "$SIM_PID"; for _ in $(seq 1 600); do kill -0 "$SIM_PID" 2>/dev/null || break; sleep 0.1; done
SIM_PID=
"$here/bench_fleet.sh" "$E2E_DIR/fleet.txt"
fleet_one=$(awk '$1 == "one" {print $2}' "$E2E_DIR/fleet.txt")
fleet_16=$(awk '$1 == "sixteen" {print $2}' "$E2E_DIR/fleet.txt")
floor_one=$(awk '$1 == "floor_one" {print $2}' "$E2E_DIR/fleet.txt")
floor_16=$(awk '$1 == "floor_sixteen" {print $2}' "$E2E_DIR/fleet.txt")
cpu_16=$(awk '$1 == "cpu_sixteen" {print $2}' "$E2E_DIR/fleet.txt")
cores=$(awk '$1 == "cores" {print $2}' "$E2E_DIR/fleet.txt")

echo
echo "lume-metal enable on the simulator (boot delay 0, stop delay 0), one run:"
echo
printf '  %-34s %9s\n' "step (first enable)" "seconds"
jq -r '.vms[0].steps[] | "  \(.name)\t\(.seconds)"' "$E2E_DIR/first.json" |
  awk -F'\t' '{printf "  %-34s %9.3f\n", $1, $2}'
printf '  %-34s %9.3f\n' "total, first enable (wall clock)" "$first"
printf '  %-34s %9.3f\n' "idempotent re-enable (median of 10)" "$again"
printf '  %-34s %9.3f\n' "manual recipe (ssh/scp/curl)" "$manual"
printf '  %-34s %9.3f\n' "OpenSSH ssh host true (median of 10)" "$ssh_true"
echo
echo "fleet on one simulator (boot delay 1 s, stop delay 0.3 s, every VM restarted), one run:"
printf '  %-34s %9.3f\n' "enable, one VM" "$fleet_one"
printf '  %-34s %9.3f\n' "enable --jobs 16, 16 VMs" "$fleet_16"
printf '  %-34s %9.3f\n' "simulator alone: restart one VM" "$floor_one"
printf '  %-34s %9.3f\n' "simulator alone: restart 16 VMs" "$floor_16"
printf '  %-34s %9.3f\n' "lume-metal beyond that, one VM" "$(echo "$fleet_one - $floor_one" | bc -l)"
printf '  %-34s %9.3f\n' "lume-metal beyond that, 16 VMs" "$(echo "$fleet_16 - $floor_16" | bc -l)"
printf '  %-34s %9.3f of %.3f (%s cores x %.3f s)\n' "busy CPU seconds, 16-VM run" "$cpu_16" \
  "$(echo "$cores * $fleet_16" | bc -l)" "$cores" "$fleet_16"
printf '  %-34s %9s %9s %9s\n' "step (summed per VM)" "one VM" "16: mean" "16: max"
awk '$1 == "step" {printf "    %-32s %9.3f %9.3f %9.3f\n", $2, $3, $4, $5}' "$E2E_DIR/fleet.txt"
echo
ratio() { echo "$1 / $2" | bc -l; }
r_first=$(ratio "$first" "$manual"); r_again=$(ratio "$again" "$ssh_true"); r_fleet=$(ratio "$fleet_16" "$fleet_one")
printf '  %-44s %6.2fx  (goal <= 0.40x)\n' "first enable / manual recipe" "$r_first"
printf '  %-44s %6.2fx  (goal <= 1.25x)\n' "idempotent re-enable / ssh host true" "$r_again"
printf '  %-44s %6.2fx  (goal <= 1.20x)\n' "16 VMs --jobs 16 / one VM" "$r_fleet"
printf '  %-44s %6.2fx\n' "first enable / re-enable" "$(ratio "$first" "$again")"
printf '  %-44s %6.2fx\n' "simulator alone: 16 VMs / one VM" "$(ratio "$floor_16" "$floor_one")"

# The chart for docs/testing.md: each figure against what it is held to, in seconds.
if [ -n "${LM_BENCH_SVG:-}" ]; then
  cat >"$E2E_DIR/bench.dat" <<DAT
"first enable\nvs manual recipe" $first $manual
"re-enable\nvs ssh host true" $again $ssh_true
"16 VMs --jobs 16\nvs one VM" $fleet_16 $fleet_one
DAT
  gnuplot -e "data='$E2E_DIR/bench.dat'; out='$LM_BENCH_SVG'" "$here/bench_enable.gp"
  echo "  chart: $LM_BENCH_SVG"
fi
