#!/usr/bin/env bash
# End-to-end scenarios of `lume-metal bench` (issue 16, docs/bench.md): llama-bench's stand-in
# (tests/guest/drivers/llama_bench.c, on the fake Metal) installed in the guest's /usr/local/bin,
# benchmarked stock and shimmed into an evidence folder, which is then checked file by file, with
# `sha256sum -c` and macOS's `shasum -a 256 -c`, and compared; the shim's activation records of
# both arms in it, and compare's refusal of a folder whose arms they contradict. bench.sh NAME.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

: "${LM_LLAMA_BENCH:?LM_LLAMA_BENCH: the llama-bench stand-in}"
: "${LM_SCHEMA:?LM_SCHEMA: docs/json-output.schema.json}" "${LM_PYTHON:?LM_PYTHON: a python3 with jsonschema}"
: "${LM_ACTIVATION_SCHEMA:?LM_ACTIVATION_SCHEMA: docs/activation-format.schema.json}"

# An enabled vm1 with llama-bench and a model file in its guest.
setup_guest() {
  sim_start --vm vm1
  lm_json "$E2E_DIR/e.json" enable vm1
  expect_rc 0 "$E2E_DIR/e.json"
  install -m 755 "$LM_LLAMA_BENCH" "$(vm_dir vm1)/usr-local-bin/llama-bench"
  mkdir -p "$(guest_home vm1)/models"
  head -c 65536 /dev/urandom >"$(guest_home vm1)/models/tiny.gguf"
  chmod 644 "$(guest_home vm1)/models/tiny.gguf"
}

csv_field() { # FILE TEST COLUMN: results.csv's value for a test
  awk -F, -v t="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $1 == t { print $col[c] }' "$1"
}

validate() { "$LM_PYTHON" "$here/../support/json-validate" "$LM_SCHEMA" "$@" || fail "not valid against the schema: $*"; }
validate_activation() {
  "$LM_PYTHON" "$here/../support/json-validate" "$LM_ACTIVATION_SCHEMA" "$@" || fail "not valid activation records: $*"
}

# Nothing of the runs' record directories is left in the guest.
no_guest_records() {
  local d; d="$(guest_home vm1)/.local/share/lume-metal/activation"
  [ ! -d "$d" ] || [ -z "$(ls -A "$d")" ] || fail "record directories left in the guest: $(ls -A "$d")"
}

# SHA256SUMS made again after a folder was changed on purpose (what a careless hand would do).
resum() { (cd "$1" && rm SHA256SUMS && find . -maxdepth 1 -type f -printf '%P\n' | LC_ALL=C sort |
  xargs sha256sum >"$E2E_DIR/sums.new" && mv "$E2E_DIR/sums.new" SHA256SUMS); }

scenario_bench_record() {
  setup_guest
  local rec="$E2E_DIR/rec" f
  # Lume's own program on PATH, as on a Mac with Lume installed: its version goes into the record.
  LUME_METAL_LUME=$(jq -r .lume "$E2E_DIR/sim.json") lm bench vm1 --repetitions 3 --out "$rec" -- llama-bench -m models/tiny.gguf -p 64 -n 16 -r 2 \
    >"$E2E_DIR/b.txt" 2>"$E2E_DIR/b.err" || fail "bench failed: $(cat "$E2E_DIR/b.txt" "$E2E_DIR/b.err")"
  cat "$E2E_DIR/b.txt"
  for f in README.md metadata.md metadata.json results.csv SHA256SUMS \
      stock-{1,2,3}.json stock-{1,2,3}.stderr shimmed-{1,2,3}.json shimmed-{1,2,3}.stderr; do
    [ -s "$rec/$f" ] || fail "the record lacks $f: $(ls "$rec")"
  done
  # The shim's records: each shimmed run's llama-bench got Apple9 (stock no); no stock run loaded the shim.
  local k r
  for k in 1 2 3; do
    ls "$rec"/stock-$k.activation.* >/dev/null 2>&1 && fail "stock-$k has activation records: $(ls "$rec")"
    r=$(ls "$rec"/shimmed-$k.activation.*.json) || fail "shimmed-$k has no activation record: $(ls "$rec")"
    [ "$(echo "$r" | wc -l)" -eq 1 ] || fail "shimmed-$k: one process expected: $r"
    jq_is "$r" .exe /usr/local/bin/llama-bench
    jq_is "$r" '[.questions[] | select(.family == 1009)][0] | "\(.stock) \(.given)"' "false true"
    jq_is "$r" '[.questions[] | select(.family == 1010)][0] | "\(.stock) \(.given)"' "false false"
    jq_is "$rec/metadata.json" "[.runs[] | select(.arm == \"shimmed\" and .round == $k)][0].activation | \"\(.took) \(.records[0])\"" \
      "1 $(basename "$r")"
    jq_is "$rec/metadata.json" "[.runs[] | select(.arm == \"stock\" and .round == $k)][0].activation | \"\(.took) \(.records | length)\"" "0 0"
    validate_activation "$r"
  done
  jq_is "$rec/metadata.json" .activation.format lume-metal-activation/1
  no_guest_records

  # Every file but itself, verified by both tools people use.
  [ "$(wc -l <"$rec/SHA256SUMS")" -eq "$(( $(ls "$rec" | wc -l) - 1 ))" ] || fail "SHA256SUMS: $(cat "$rec/SHA256SUMS")"
  (cd "$rec" && sha256sum -c --strict SHA256SUMS) || fail "sha256sum -c failed"
  (cd "$rec" && shasum -a 256 -c SHA256SUMS >/dev/null) || fail "shasum -a 256 -c failed"

  # Raw output as llama-bench printed it; -o json was added to the command.
  jq -e 'length == 2 and .[0].n_prompt == 64 and .[1].n_gen == 16 and (.[0].samples_ts | length) == 2' \
    "$rec/stock-2.json" >/dev/null || fail "stock-2.json: $(cat "$rec/stock-2.json")"
  grep -qx 'ggml_metal_device_init: GPU family: MTLGPUFamilyApple5  (1005)' "$rec/stock-1.stderr" ||
    fail "stock-1.stderr: $(cat "$rec/stock-1.stderr")"
  grep -qx 'ggml_metal_device_init: GPU family: MTLGPUFamilyApple9  (1009)' "$rec/shimmed-3.stderr" ||
    fail "shimmed-3.stderr: $(cat "$rec/shimmed-3.stderr")"

  # results.csv: the speed-up the shim gives the stand-in, and what it selected per arm.
  cat "$rec/results.csv"
  local t ratio
  for t in pp64 tg16; do
    ratio=$(csv_field "$rec/results.csv" "$t" ratio)
    echo "figure: $t shimmed / stock = ${ratio}x (medians of samples_ts over 3 rounds x 2 repetitions)"
    awk -v r="$ratio" 'BEGIN { exit !(r > 1) }' || fail "$t: no speed-up in results.csv ($ratio)"
    [ "$(csv_field "$rec/results.csv" "$t" stock_samples)" = 6 ] || fail "$t: not 6 stock samples"
  done
  [ "$(csv_field "$rec/results.csv" pp64 stock_gpu_family)" = "Apple5 (1005) Common3 (3003)" ] || fail "stock family"
  [ "$(csv_field "$rec/results.csv" pp64 shimmed_gpu_family)" = "Apple9 (1009) Common3 (3003)" ] || fail "shimmed family"
  [ "$(csv_field "$rec/results.csv" pp64 stock_simdgroup_reduction)" = false ] || fail "stock reduction"
  [ "$(csv_field "$rec/results.csv" pp64 shimmed_simdgroup_reduction)" = true ] || fail "shimmed reduction"
  [ "$(csv_field "$rec/results.csv" tg16 shimmed_bfloat16)" = true ] || fail "shimmed bfloat16"
  grep -q "The unlock changed llama.cpp's kernel choice" "$rec/README.md" || fail "README: $(cat "$rec/README.md")"
  grep -Eq '^\| pp64 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+x \| 6 / 6 \|$' "$rec/README.md" || fail "README table: $(cat "$rec/README.md")"

  # metadata.json: hashes computed in the guest match the files; the environment; the order of runs.
  local m="$rec/metadata.json"
  jq_is "$m" .workload.program.sha256 "$(sha256sum "$LM_LLAMA_BENCH" | cut -c1-64)"
  jq_is "$m" .workload.program.path "/usr/local/bin/llama-bench"
  jq_is "$m" '.workload.models[0].path' models/tiny.gguf
  jq_is "$m" '.workload.models[0].sha256' "$(sha256sum "$(guest_home vm1)/models/tiny.gguf" | cut -c1-64)"
  jq_is "$m" '.workload.argv | join(" ")' "llama-bench -m models/tiny.gguf -p 64 -n 16 -r 2 -o json"
  jq -e '.workload.shimmed_command | contains("LUME_METAL_APPLE_FAMILY_MAX=1009")' "$m" >/dev/null || fail "shimmed command"
  jq -e '.workload.stock_command | contains("LUME_METAL") | not' "$m" >/dev/null || fail "stock command carries the shim"
  jq_is "$m" .vm.manager lume-api
  jq_is "$m" .vm.manager_version 0.5.3
  jq_is "$m" .vm.display 1024x768
  jq_is "$m" .vm.model VirtualMac2,1
  jq_is "$m" .guest.os_version "$(cat "$(vm_dir vm1)/os_version")"
  jq_is "$m" .guest.os_build "$(cat "$(vm_dir vm1)/build_version")"
  jq_is "$m" .guest.sip enabled
  jq_is "$m" .guest.shell "/bin/${GUEST_SSHD_SHELL:-zsh}"
  jq_is "$m" .profile.name published
  jq_is "$m" '.profile.environment.LUME_METAL_APPLE_FAMILY_MAX' 1009
  jq -e '.lume_metal.shim.sha256 | test("^[0-9a-f]{64}$")' "$m" >/dev/null || fail "shim hash: $(jq .lume_metal "$m")"
  jq -e '.host.user != null and .started_at != null and .ended_at != null and .failure == null' "$m" >/dev/null ||
    fail "metadata: $(cat "$m")"
  jq_is "$m" '[.runs[] | "\(.arm)-\(.round)"] | join(" ")' "stock-1 shimmed-1 stock-2 shimmed-2 stock-3 shimmed-3"
  grep -q '^## workload' "$rec/metadata.md" || fail "metadata.md: $(cat "$rec/metadata.md")"
  grep -q 'shasum -a 256' "$(vm_dir vm1)/calls.log" 2>/dev/null || true # shasum is the machine's (not a stand-in)

  # --format json: the same results in the envelope, valid against the schema.
  lm_json_first "$E2E_DIR/b.json" bench vm1 --repetitions 1 --out "$E2E_DIR/rec2" -- llama-bench -m models/tiny.gguf \
    -p 32 -n 0 -r 1 -o jsonl
  expect_rc 0 "$E2E_DIR/b.json"
  jq_is "$E2E_DIR/b.json" .command bench
  jq_is "$E2E_DIR/b.json" '.tests[0].test' pp32
  jq_is "$E2E_DIR/b.json" .kernel_choice_changed true
  jq_is "$E2E_DIR/b.json" .shimmed_metal.apple 1009
  [ -s "$E2E_DIR/rec2/stock-1.json" ] || fail "rec2"

  # compare: both folders and the published figures; a changed file is refused.
  lm bench compare "$rec" "$E2E_DIR/rec2" >"$E2E_DIR/c.txt" || fail "compare: $(cat "$E2E_DIR/c.txt")"
  cat "$E2E_DIR/c.txt"
  grep -Eq "rec +vm1 +pp64 " "$E2E_DIR/c.txt" || fail "compare: no pp64 row"
  grep -Eq "rec2 +vm1 +pp32 " "$E2E_DIR/c.txt" || fail "compare: no pp32 row"
  grep -Eq "^published +TinyLlama.* pp512 +431.86 +4786.70 +11.08x" "$E2E_DIR/c.txt" || fail "compare: no published row"
  grep -q "2026-08-09-m1-ultra/README.md" "$E2E_DIR/c.txt" || fail "compare: no provenance"
  lm_json "$E2E_DIR/c.json" bench compare "$rec" "$E2E_DIR/rec2"
  expect_rc 0 "$E2E_DIR/c.json"
  jq_is "$E2E_DIR/c.json" '.rows[0].test' pp64
  validate "$E2E_DIR/b.json" "$E2E_DIR/c.json"

  # A bare-metal record (the stand-in on this machine, the fake Metal at its stock level): compare
  # sets the VM's unlocked runs against it.
  head -c 4096 /dev/urandom >"$E2E_DIR/host-model.gguf"
  LD_LIBRARY_PATH=$LM_FAKE_METAL lm_json_first "$E2E_DIR/h.json" bench --bare-metal --repetitions 2 \
    --out "$E2E_DIR/bare" -- "$LM_LLAMA_BENCH" -m "$E2E_DIR/host-model.gguf" -p 64 -n 16 -r 2
  expect_rc 0 "$E2E_DIR/h.json"
  jq_is "$E2E_DIR/h.json" .bare_metal true
  jq_is "$E2E_DIR/h.json" '.tests[0].stock_samples' 4
  jq_is "$E2E_DIR/bare/metadata.json" .kind bare-metal
  jq_is "$E2E_DIR/bare/metadata.json" '.workload.models[0].sha256' "$(sha256sum "$E2E_DIR/host-model.gguf" | cut -c1-64)"
  [ -s "$E2E_DIR/bare/host-2.json" ] && [ -s "$E2E_DIR/bare/host-1.stderr" ] || fail "bare: $(ls "$E2E_DIR/bare")"
  (cd "$E2E_DIR/bare" && sha256sum -c --strict SHA256SUMS >/dev/null) || fail "bare: sha256sum -c failed"
  lm_json_first "$E2E_DIR/cb.json" bench compare "$rec" "$E2E_DIR/bare"
  expect_rc 0 "$E2E_DIR/cb.json"
  jq -e '.rows[0].test == "pp64" and .rows[0].bare_metal > 0 and .rows[0].unlocked_over_bare_metal > 0' \
    "$E2E_DIR/cb.json" >/dev/null || fail "compare with bare metal: $(cat "$E2E_DIR/cb.json")"
  echo "figure: pp64 unlocked / bare metal (the stand-in, stock fake Metal on the host) = $(jq .rows[0].unlocked_over_bare_metal "$E2E_DIR/cb.json")"
  validate "$E2E_DIR/h.json" "$E2E_DIR/cb.json"

  echo "tampered" >>"$E2E_DIR/rec2/stock-1.stderr"
  lm_json "$E2E_DIR/c2.json" bench compare "$rec" "$E2E_DIR/rec2"
  expect_rc 1 "$E2E_DIR/c2.json"
  jq_is "$E2E_DIR/c2.json" .error.code corrupt
  validate "$E2E_DIR/c2.json"
}

# Any other workload: times and raw output only; refusals that change nothing.
scenario_bench_none() {
  setup_guest
  local rec="$E2E_DIR/none"
  lm bench vm1 --workload-parser none --repetitions 2 --out "$rec" -- llama-bench -m models/tiny.gguf -p 16 -n 0 \
    -r 1 -o md >"$E2E_DIR/n.txt" 2>&1 || fail "bench none: $(cat "$E2E_DIR/n.txt")"
  for f in stock-1.stdout stock-2.stdout shimmed-1.stdout shimmed-2.stderr results.csv README.md; do
    [ -s "$rec/$f" ] || fail "the record lacks $f: $(ls "$rec")"
  done
  grep -q '^| stand-in | pp16 |' "$rec/stock-1.stdout" || fail "raw md output: $(cat "$rec/stock-1.stdout")"
  [ "$(csv_field "$rec/results.csv" wall unit)" = s ] || fail "results.csv: $(cat "$rec/results.csv")"
  jq_is "$rec/metadata.json" .workload.parser none
  jq_is "$rec/metadata.json" '.workload.argv | join(" ")' "llama-bench -m models/tiny.gguf -p 16 -n 0 -r 1 -o md"
  (cd "$rec" && sha256sum -c --strict SHA256SUMS >/dev/null) || fail "sha256sum -c failed"

  # A folder that holds files is refused, and left as it was.
  lm_json_first "$E2E_DIR/r.json" bench vm1 --out "$rec" -- llama-bench -m models/tiny.gguf
  expect_rc 2 "$E2E_DIR/r.json"
  jq -r .error.message "$E2E_DIR/r.json" | grep -q "is not empty" || fail "$(cat "$E2E_DIR/r.json")"
  (cd "$rec" && sha256sum -c --strict SHA256SUMS >/dev/null) || fail "the refused run changed the folder"
  # A workload that fails is recorded as such, with its stderr, and the run fails.
  lm_json_first "$E2E_DIR/f.json" bench vm1 --repetitions 1 --out "$E2E_DIR/failed" -- llama-bench -m models/missing.gguf
  expect_rc 1 "$E2E_DIR/f.json"
  jq_is "$E2E_DIR/f.json" .error.code remote
  grep -q "failed to load model 'models/missing.gguf'" "$E2E_DIR/failed/stock-1.stderr" || fail "no stderr kept"
  jq -e '.workload.models[0].sha256 == null and .failure != null' "$E2E_DIR/failed/metadata.json" >/dev/null ||
    fail "$(cat "$E2E_DIR/failed/metadata.json")"
  (cd "$E2E_DIR/failed" && sha256sum -c --strict SHA256SUMS >/dev/null) || fail "the failed record has no valid sums"
  validate "$E2E_DIR/r.json" "$E2E_DIR/f.json"
}

# The records contradict the arms: compare refuses, saying which run and why; the bench itself warns.
scenario_bench_activation() {
  setup_guest
  local good="$E2E_DIR/good" f shim

  # 1. A wrapper that drops the shim before the workload starts: the shimmed arm ran stock.
  lm bench vm1 --repetitions 1 --out "$E2E_DIR/dropped" -- env -u LD_PRELOAD llama-bench -m models/tiny.gguf \
    -p 16 -n 0 -r 1 >"$E2E_DIR/d.txt" 2>&1 || fail "bench: $(cat "$E2E_DIR/d.txt")"
  grep -q "no process of the shimmed run of round 1 got the unlock" "$E2E_DIR/d.txt" || fail "no warning: $(cat "$E2E_DIR/d.txt")"
  f=$(ls "$E2E_DIR"/dropped/shimmed-1.activation.*.json) || fail "env's record: $(ls "$E2E_DIR/dropped")"
  jq_is "$f" '.exe | test("/env$")' true
  jq_is "$f" '.questions | length' 0
  validate_activation "$f"
  lm_json "$E2E_DIR/c1.json" bench compare "$E2E_DIR/dropped"
  expect_rc 1 "$E2E_DIR/c1.json"
  jq -r .error.message "$E2E_DIR/c1.json" | grep -q "dropped: the shimmed run of round 1 has no activation: processes loaded the shim but none had an answer widened" ||
    fail "compare: $(cat "$E2E_DIR/c1.json")"
  validate "$E2E_DIR/c1.json"

  # 2. A good folder, then the same with one shimmed run's records removed (sums made again): refused.
  lm bench vm1 --repetitions 2 --out "$good" -- llama-bench -m models/tiny.gguf -p 16 -n 0 -r 1 >/dev/null 2>&1 ||
    fail "bench good"
  lm bench compare "$good" >/dev/null || fail "compare good"
  cp -r "$good" "$E2E_DIR/norecords"
  rm "$E2E_DIR"/norecords/shimmed-2.activation.*.json
  jq '(.runs[] | select(.arm == "shimmed" and .round == 2) | .activation) |= {records: [], took: 0}' \
    "$good/metadata.json" >"$E2E_DIR/norecords/metadata.json"
  resum "$E2E_DIR/norecords"
  lm_json "$E2E_DIR/c2.json" bench compare "$good" "$E2E_DIR/norecords"
  expect_rc 1 "$E2E_DIR/c2.json"
  jq -r .error.message "$E2E_DIR/c2.json" | grep -q "norecords: the shimmed run of round 2 has no activation: no process of the workload loaded the shim" ||
    fail "compare: $(cat "$E2E_DIR/c2.json")"
  # A folder from before the records: refused too.
  cp -r "$good" "$E2E_DIR/old"
  jq 'del(.activation) | del(.runs[].activation)' "$good/metadata.json" >"$E2E_DIR/old/metadata.json"
  rm "$E2E_DIR"/old/*.activation.*
  resum "$E2E_DIR/old"
  lm_json "$E2E_DIR/c3.json" bench compare "$E2E_DIR/old"
  expect_rc 1 "$E2E_DIR/c3.json"
  jq -r .error.message "$E2E_DIR/c3.json" | grep -q "recorded without activation records" || fail "compare: $(cat "$E2E_DIR/c3.json")"

  # 3. The guest's shell exports the shim to everything (Cua's guide, children included): the stock
  # arm loads it too. bench warns; compare refuses.
  shim=$(jq -r .lume_metal.shim.path "$good/metadata.json")
  printf 'export LD_PRELOAD=%s LUME_METAL_APPLE_FAMILY_MAX=1009 LUME_METAL_INHERIT=1\n' "$shim" >"$(guest_home vm1)/.zshenv"
  lm bench vm1 --repetitions 1 --out "$E2E_DIR/global" -- llama-bench -m models/tiny.gguf -p 16 -n 0 -r 1 \
    >"$E2E_DIR/g.txt" 2>&1 || fail "bench global: $(cat "$E2E_DIR/g.txt")"
  rm "$(guest_home vm1)/.zshenv"
  grep -q "of the stock run of round 1 loaded the shim (activation records): the stock arm is not stock" "$E2E_DIR/g.txt" ||
    fail "no warning: $(cat "$E2E_DIR/g.txt")"
  jq -e '[.runs[] | select(.arm == "stock")][0].activation.took >= 1' "$E2E_DIR/global/metadata.json" >/dev/null ||
    fail "stock took: $(jq .runs "$E2E_DIR/global/metadata.json")"
  lm_json "$E2E_DIR/c4.json" bench compare "$E2E_DIR/global"
  expect_rc 1 "$E2E_DIR/c4.json"
  jq -r .error.message "$E2E_DIR/c4.json" | grep -q "global: the stock run of round 1 has an activation" ||
    fail "compare: $(cat "$E2E_DIR/c4.json")"
  validate "$E2E_DIR/c2.json" "$E2E_DIR/c3.json" "$E2E_DIR/c4.json"
  validate_activation "$E2E_DIR"/global/*.activation.*.json "$good"/*.activation.*.json
  no_guest_records
}

name=${1:?usage: bench.sh NAME}
"scenario_$name"
check_guest_shells
echo "e2e $name: passed"
