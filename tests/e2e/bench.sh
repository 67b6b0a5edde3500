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
: "${LM_RESULTS_SCHEMA:?LM_RESULTS_SCHEMA: docs/results-report.schema.json}"

# An enabled vm1 with llama-bench and a model file in its guest.
setup_guest() {
  # shellcheck disable=SC2086 # SETUP_VMS: more --vm NAME words
  sim_start --vm vm1 ${SETUP_VMS:-}
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
  # Every row names the llama.cpp build (the stand-in prints build_commit 0000000, build_number 0).
  grep -Eq "rec +vm1 +build 0000000 +pp64 " "$E2E_DIR/c.txt" || fail "compare: no pp64 row"
  grep -Eq "rec2 +vm1 +build 0000000 +pp32 " "$E2E_DIR/c.txt" || fail "compare: no pp32 row"
  grep -Eq "^published +TinyLlama.* b10167 +pp512 +431.86 +4786.70 +11.08x +4871.99 +0.98x" "$E2E_DIR/c.txt" ||
    fail "compare: no published bare-metal figure"
  grep -Eq "^published +Gemma 4.* b10167 +tg128 +3.41 +49.67 +14.54x +52.38 +0.95x" "$E2E_DIR/c.txt" ||
    fail "compare: no Gemma 4 figures"
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
  # The bare-metal folder's own row: "bare metal", its figure under bare metal, none under stock.
  jq -e '[.rows[] | select(.vm == "bare metal")] | length == 2 and all(.stock == null and .bare_metal > 0
      and .proven_by_activation_records == null)' \
    "$E2E_DIR/cb.json" >/dev/null || fail "the bare-metal row: $(cat "$E2E_DIR/cb.json")"
  echo "figure: pp64 unlocked / bare metal (the stand-in, stock fake Metal on the host) = $(jq .rows[0].unlocked_over_bare_metal "$E2E_DIR/cb.json")"
  validate "$E2E_DIR/h.json" "$E2E_DIR/cb.json"
  # Its text: one column (the host arm), nothing about an unlock.
  LD_LIBRARY_PATH=$LM_FAKE_METAL lm bench --bare-metal --repetitions 1 --out "$E2E_DIR/bare-text" -- "$LM_LLAMA_BENCH" \
    -m "$E2E_DIR/host-model.gguf" -p 64 -n 16 -r 1 >"$E2E_DIR/h.txt" 2>/dev/null || fail "bare text"
  cat "$E2E_DIR/h.txt"
  grep -Eq '^  test +host t/s$' "$E2E_DIR/h.txt" && grep -Eq '^  pp64 +[0-9.]+$' "$E2E_DIR/h.txt" &&
    ! grep -q "unlock\|shimmed" "$E2E_DIR/h.txt" || fail "bare-metal text: $(cat "$E2E_DIR/h.txt")"
  grep -q "llama.cpp build 0000000" "$E2E_DIR/h.txt" || fail "bare-metal headline without the build"

  # The pictures: README.md's Mermaid chart per test; compare --markdown's table and charts (what the
  # Action's job summary embeds); compare --svg, opened with an XML parser: a bar per arm and figure.
  grep -q '^# lume-metal bench: vm1, llama.cpp build 0000000$' "$rec/README.md" || fail "README headline: $(head -1 "$rec/README.md")"
  grep -q '^xychart-beta$' "$rec/README.md" &&
    grep -Eq '^    x-axis \["stock [0-9]+\.[0-9]{2}", "shimmed [0-9]+\.[0-9]{2}"\]$' "$rec/README.md" &&
    grep -Eq '^    title "vm1 pp64: [0-9]+\.[0-9]{2}× unlocked / stock"$' "$rec/README.md" &&
    grep -Eq '^    y-axis "t/s, higher is faster" 0 --> [0-9.]+$' "$rec/README.md" ||
    fail "README chart: $(cat "$rec/README.md")"
  lm bench compare --markdown --svg "$E2E_DIR/chart.svg" "$rec" "$E2E_DIR/bare" >"$E2E_DIR/c.md" || fail "compare --markdown"
  grep -q '^| source | vm / workload | llama.cpp | test |' "$E2E_DIR/c.md" || fail "markdown table: $(cat "$E2E_DIR/c.md")"
  [ "$(grep -c '^```mermaid$' "$E2E_DIR/c.md")" -eq 6 ] || fail "markdown: 2 tests + 4 published charts: $(cat "$E2E_DIR/c.md")"
  grep -Eq '^    x-axis \["stock [0-9.]+", "unlocked [0-9.]+", "bare metal [0-9.]+"\]$' "$E2E_DIR/c.md" ||
    fail "markdown: no bare-metal bar"
  grep -q '^    x-axis \["stock 431.86", "unlocked 4786.70", "bare metal 4871.99"\]$' "$E2E_DIR/c.md" &&
    grep -q '^    y-axis "t/s, higher is faster" 0 --> 6000$' "$E2E_DIR/c.md" &&
    grep -q '^    bar \[431.86, -6000, -6000\]$' "$E2E_DIR/c.md" && grep -q '^    bar \[-6000, 4786.70, -6000\]$' "$E2E_DIR/c.md" &&
    grep -q '^    bar \[-6000, -6000, 4871.99\]$' "$E2E_DIR/c.md" || fail "markdown: the published bars"
  # The pictures as a reader sees them: rendered in Chromium (tests/render/render.mjs; Mermaid from
  # npm), the bare-metal record's README too (its one bar blue), one browser for the four, the PNGs
  # kept in LM_RENDER_OUT.
  if [ -n "${LM_RENDER_JS:-}" ]; then
    "$LM_NODE" "$LM_RENDER_JS" --chromium "$LM_CHROMIUM" --out "$LM_RENDER_OUT" "$rec/README.md" "$E2E_DIR/bare/README.md" \
      "$E2E_DIR/c.md" "$E2E_DIR/chart.svg" || fail "the rendered charts"
  else
    echo "charts not rendered here: test render_charts says why"
  fi
  "$LM_PYTHON" - "$E2E_DIR/chart.svg" "$(csv_field "$rec/results.csv" pp64 shimmed_median)" <<'PY' || fail "svg: $(cat "$E2E_DIR/chart.svg")"
import sys, xml.etree.ElementTree as ET
ns = {"s": "http://www.w3.org/2000/svg"}
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
charts = root.findall("s:g[@class='chart']", ns)
tests = [g.get("data-test") for g in charts]
assert len(charts) == 6, tests
assert "tiny pp64, vm1" in tests, tests
assert "TinyLlama Q4_K_M pp512, Cua" in tests, tests
for g in charts:
    bars = g.findall("s:rect[@class='bar']", ns)
    labels = [t.text for t in g.findall("s:text[@class='label']", ns)]
    assert [b.get("data-label") for b in bars] == labels, (bars, labels)
    assert labels == ["stock", "unlocked", "bare metal"], labels
    heights = [float(b.get("height")) for b in bars]
    values = [float(b.get("data-value")) for b in bars]
    top = float(g.get("data-axis-max"))
    assert all(h > 0 for h in heights) and max(values) <= top, (heights, values, top)
    # Heights are proportional to the figures, on an axis from 0 to top (170 px).
    assert all(abs(h / 170.0 - v / top) < 0.01 for h, v in zip(heights, values)), (heights, values, top)
    assert [t.text for t in g.findall(".//s:text[@class='tick-label']", ns)][0] == "0"
    assert [t.text for t in g.findall("s:text[@class='value']", ns)] == ["%.2f" % v for v in values]
pp = [g for g in charts if g.get("data-test") == "tiny pp64, vm1"][0]
assert abs(float(pp.findall("s:rect", ns)[1].get("data-value")) - float(sys.argv[2])) < 0.01
print("svg: %d charts, %d bars, checked" % (len(charts), sum(len(g.findall("s:rect", ns)) for g in charts)))
PY

  # report: the issue-ready block and the results document (valid against its schema), the archive.
  lm report "$rec" >"$E2E_DIR/r.md" || fail "report"
  cat "$E2E_DIR/r.md"
  grep -q "^### lume-metal results: $rec\$" "$E2E_DIR/r.md" || fail "report heading"
  grep -q "^| guest macOS | .* |$" "$E2E_DIR/r.md" && grep -q "^| host preference needed | not measured (no ablation) |$" "$E2E_DIR/r.md" ||
    fail "report fields: $(cat "$E2E_DIR/r.md")"
  grep -q "^| SHA256SUMS | sha256 $(sha256sum "$rec/SHA256SUMS" | cut -c1-64) |$" "$E2E_DIR/r.md" || fail "report: sums digest"
  grep -q "^- supportsFamily: Apple9 (1009): stock false, given true$" "$E2E_DIR/r.md" || fail "report: widened answers"
  grep -q "^| model | models/tiny.gguf, 65536 bytes, SHA-256 $(sha256sum "$(guest_home vm1)/models/tiny.gguf" | cut -c1-64) |$" \
    "$E2E_DIR/r.md" || fail "report: model"
  lm report --format json "$rec" "$E2E_DIR/bare" >"$E2E_DIR/r.json" || fail "report json"
  "$LM_PYTHON" "$here/../support/json-validate" "$LM_RESULTS_SCHEMA" "$E2E_DIR/r.json" || fail "report: not valid against the schema"
  jq_is "$E2E_DIR/r.json" '.reports[0].arms[0].tests[0] | "\(.test) \(.shimmed > .stock)"' "pp64 true"
  jq_is "$E2E_DIR/r.json" '.reports[0].llama_cpp.commit' 0000000
  # The bare-metal folder reported beside it: % of bare metal for the tests of the same name.
  jq -e '.reports[0].arms[0].tests[0] | .bare_metal > 0 and (.percent_of_bare_metal - 100 * .shimmed / .bare_metal | fabs) < 0.001' \
    "$E2E_DIR/r.json" >/dev/null || fail "report: % of bare metal: $(jq .reports[0].arms "$E2E_DIR/r.json")"
  jq_is "$E2E_DIR/r.json" '.reports[1] | "\(.kind) \(.arms[0].tests[0].shimmed) \(.kernel_verdict)"' "bare-metal null bare metal: no shim"
  # The issue form asks for exactly the report's fields, and for the report itself and the archive.
  "$LM_PYTHON" - "$here/../../.github/ISSUE_TEMPLATE/results.yml" "$E2E_DIR/r.json" <<'PY' || fail "the issue form"
import json, sys, yaml
form = yaml.safe_load(open(sys.argv[1]))
ids = {b["id"]: b for b in form["body"] if "id" in b}
report = json.load(open(sys.argv[2]))["reports"][0]
# report member -> form field
asked = {"host": ["host_chip", "host_macos"], "guest": ["guest_macos"], "vm_manager": ["vm_manager"],
         "lume_metal_version": ["lume_metal"], "llama_cpp": ["llama_cpp"], "models": ["model"], "command": ["command"],
         "arms": ["medians", "widened"], "kernel_verdict": ["kernel_verdict"], "known_defects": ["defects"],
         "preference_needed": ["preference_needed"], "sha256sums_sha256": ["sums"]}
facts = set(report) - {"folder", "kind", "failure", "published_by", "published_source"}
assert facts == set(asked), facts ^ set(asked)
want = {f for fs in asked.values() for f in fs} | {"report", "archive"}
assert set(ids) == want, set(ids) ^ want
assert all(b["validations"]["required"] for b in ids.values())
assert ids["report"]["type"] == "textarea"
print("issue form: %d fields, every report fact asked" % len(ids))
PY
  lm report --archive "$E2E_DIR/rec.tar.gz" "$rec" >/dev/null || fail "report --archive"
  # grep reads the listing to its end (not -q): under pipefail an early exit made tar's next
  # write a SIGPIPE, and the check failed now and then.
  tar -tzf "$E2E_DIR/rec.tar.gz" | grep -x './rec/SHA256SUMS' >/dev/null || fail "archive: $(tar -tzf "$E2E_DIR/rec.tar.gz")"
  (mkdir "$E2E_DIR/un" && cd "$E2E_DIR/un" && tar -xzf "$E2E_DIR/rec.tar.gz" && cd rec && sha256sum -c --strict SHA256SUMS >/dev/null) ||
    fail "archive: the unpacked folder does not check"
  cp "$E2E_DIR/rec.tar.gz" "$E2E_DIR/rec.keep"
  lm report --archive "$E2E_DIR/rec.tar.gz" "$rec" >/dev/null 2>"$E2E_DIR/a.err" && fail "archive written over a file"
  grep -q "rec.tar.gz exists" "$E2E_DIR/a.err" && cmp -s "$E2E_DIR/rec.tar.gz" "$E2E_DIR/rec.keep" || fail "archive: $(cat "$E2E_DIR/a.err")"
  lm report --force --archive "$E2E_DIR/rec.tar.gz" "$rec" >/dev/null || fail "report --archive --force"
  ls "$E2E_DIR"/rec.tar.gz.*.tmp 2>/dev/null && fail "archive temporary left"

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
  # A folder from before the records (as Cua's published runs): shown, marked as not proven by them.
  cp -r "$good" "$E2E_DIR/old"
  jq 'del(.activation) | del(.runs[].activation)' "$good/metadata.json" >"$E2E_DIR/old/metadata.json"
  rm "$E2E_DIR"/old/*.activation.*
  resum "$E2E_DIR/old"
  lm_json "$E2E_DIR/c3.json" bench compare "$E2E_DIR/old"
  expect_rc 0 "$E2E_DIR/c3.json"
  jq_is "$E2E_DIR/c3.json" '.rows[0] | "\(.proven_by_activation_records) \(.note)"' "false not proven by activation records"
  lm bench compare "$E2E_DIR/old" | grep -q "pp16 .* not proven by activation records" || fail "compare text: not marked"
  # A good folder's rows are proven.
  lm_json "$E2E_DIR/c5.json" bench compare "$good"
  jq_is "$E2E_DIR/c5.json" '.rows[0] | "\(.proven_by_activation_records) \(.note)"' "true null"

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
  validate "$E2E_DIR/c2.json" "$E2E_DIR/c3.json" "$E2E_DIR/c4.json" "$E2E_DIR/c5.json"
  validate_activation "$E2E_DIR"/global/*.activation.*.json "$good"/*.activation.*.json
  no_guest_records
}

# The preference as the journal and the store hold it: what an ablation must give back exactly.
pref_state() { lm host status --format json | jq -c '.host_preference | {present, value, matches, recorded, original, kept, written}'; }

# The host-preference ablation (issue 35): both arms with the preference off and on, the VM
# restarted between them, the exercise in each, the preference given back; then a second one
# interrupted by SIGINT in its first arm gives it back too.
# Another VM enabled with the preference: the ablation refuses to turn it off under it, naming it,
# and changes nothing; --force ablates (issue 50).
scenario_bench_ablation_others() {
  SETUP_VMS="--vm vm2" setup_guest
  lm_json "$E2E_DIR/e2.json" enable vm2
  expect_rc 0 "$E2E_DIR/e2.json"
  local before boots rc=0
  before=$(pref_state)
  boots=$(sim_events boot vm1)
  lm bench vm1 --ablate-host-preference --repetitions 1 --out "$E2E_DIR/abl" -- llama-bench -m models/tiny.gguf -p 32 -n 8 -r 1 \
    >"$E2E_DIR/r.txt" 2>"$E2E_DIR/r.err" || rc=$?
  [ "$rc" -eq 1 ] || fail "the ablation under vm2: exit $rc: $(cat "$E2E_DIR/r.txt" "$E2E_DIR/r.err")"
  grep -q "^lume-metal: .*1 other VM is still enabled (vm2) and needs the preference: the ablation turns it off for its stock arm, and one restarted meanwhile would come back stock; forced, the ablation runs anyway" \
    "$E2E_DIR/r.err" && grep -qx "hint: pass --force to ablate anyway" "$E2E_DIR/r.err" ||
    fail "the refusal: $(cat "$E2E_DIR/r.err")"
  [ "$(pref_state)" = "$before" ] && [ "$(sim_events boot vm1)" -eq "$boots" ] && [ ! -e "$E2E_DIR/abl" ] ||
    fail "a refused ablation changed something: $(pref_state), $(( $(sim_events boot vm1) - boots )) boots, $(ls "$E2E_DIR" | tr '\n' ' ')"
  lm bench vm1 --ablate-host-preference --force --repetitions 1 --out "$E2E_DIR/abl" -- llama-bench -m models/tiny.gguf -p 32 -n 8 -r 1 \
    >"$E2E_DIR/f.txt" 2>"$E2E_DIR/f.err" || fail "the ablation with --force: $(cat "$E2E_DIR/f.txt" "$E2E_DIR/f.err")"
  [ "$(pref_state)" = "$before" ] || fail "the preference not given back: $before -> $(pref_state)"
  jq_is "$E2E_DIR/abl/metadata.json" .kind ablation
}

scenario_bench_ablation() {
  setup_guest
  local abl="$E2E_DIR/abl" before boots k f
  before=$(pref_state)
  plist_xml >"$E2E_DIR/plist.before"
  boots=$(sim_events boot vm1)
  lm bench vm1 --ablate-host-preference --repetitions 1 --out "$abl" -- llama-bench -m models/tiny.gguf -p 32 -n 8 -r 1 \
    >"$E2E_DIR/a.txt" 2>"$E2E_DIR/a.err" || fail "ablation: $(cat "$E2E_DIR/a.txt" "$E2E_DIR/a.err")"
  cat "$E2E_DIR/a.txt" "$E2E_DIR/a.err"
  # Two restarts: off (the VM boots at the stock level), then on again (as found).
  [ "$(sim_events boot vm1)" -eq $((boots + 2)) ] || fail "ablation: $(( $(sim_events boot vm1) - boots )) boots, 2 expected"
  [ "$(pref_state)" = "$before" ] || fail "the preference not given back: $before -> $(pref_state)"
  plist_xml | cmp -s - "$E2E_DIR/plist.before" || fail "the plist changed: $(plist_xml)"
  grep -q "host preference needed: yes" "$E2E_DIR/a.txt" || fail "ablation text: $(cat "$E2E_DIR/a.txt")"
  lm status vm1 --format json | jq -e '.vms[0].restart_pending == false' >/dev/null || fail "restart pending after the ablation"

  # One folder: its summary, the two records, sums over all of it (sha256sum and shasum read them).
  for f in README.md metadata.json metadata.md results.csv SHA256SUMS preference-off/README.md preference-off/SHA256SUMS \
      preference-on/README.md preference-on/shimmed-1.json; do
    [ -s "$abl/$f" ] || fail "the ablation lacks $f: $(ls -R "$abl")"
  done
  (cd "$abl" && sha256sum -c --strict SHA256SUMS >/dev/null && shasum -a 256 -c SHA256SUMS >/dev/null) || fail "ablation sums"
  grep -q "preference-on/shimmed-1.json" "$abl/SHA256SUMS" || fail "the sums do not cover the arms"
  (cd "$abl/preference-on" && sha256sum -c --strict SHA256SUMS >/dev/null) || fail "the on arm's own sums"
  jq_is "$abl/metadata.json" .kind ablation
  jq_is "$abl/metadata.json" .preference_needed true
  jq_is "$abl/metadata.json" '[.arms[] | "\(.preference):\(.exercise.verdict)"] | join(" ")' "off:failed on:passed"
  jq_is "$abl/metadata.json" '.arms[1].exercise.results.simdgroup_reduction' pass
  jq_is "$abl/metadata.json" '.arms[0].exercise.results.simdgroup_reduction | . != "pass"' true
  jq_is "$abl/metadata.json" '.preference | "\(.order) \(.restored)"' "off, then on (as found) true"
  jq_is "$abl/metadata.json" .vm.name vm1
  # With the preference off, llama-bench's reduction kernel failed in the shimmed arm: that arm failed,
  # and its README says so first.
  jq_is "$abl/metadata.json" '.arms[0].failure | test("the shimmed run of round 1 exited with 1")' true
  # What failed is quoted in a code block, and the README claims nothing about the unlock.
  sed -n 3p "$abl/preference-off/README.md" | grep -q '^\*\*This record FAILED\.\*\* ' &&
    sed -n 5,6p "$abl/preference-off/README.md" | tr '\n' ' ' | grep -q '^```text the shimmed run of round 1 exited' &&
    ! grep -q "The unlock changed llama.cpp's kernel choice" "$abl/preference-off/README.md" &&
    grep -q "^The record failed, so it does not show whether the unlock changed" "$abl/preference-off/README.md" ||
    fail "the failed arm's README: $(cat "$abl/preference-off/README.md")"
  head -1 "$abl/README.md" | grep -q '^# lume-metal bench: vm1, host-preference ablation, llama.cpp build 0000000$' ||
    fail "ablation README: $(head -3 "$abl/README.md")"
  grep -q '^\*\*Host preference needed: yes.\*\*' "$abl/README.md" || fail "ablation README: $(cat "$abl/README.md")"
  [ "$(grep -c '^```mermaid$' "$abl/README.md")" -ge 2 ] || fail "ablation README: no charts"
  grep -q '^off,failed,pp32,' "$abl/results.csv" && grep -q '^on,passed,pp32,' "$abl/results.csv" || fail "results.csv: $(cat "$abl/results.csv")"
  echo "figure: pp32 shimmed, preference on: $(grep '^on,passed,pp32,' "$abl/results.csv" | cut -d, -f5) t/s"

  # report: the answer, each arm, valid against the schema; compare sets both arms side by side.
  lm report "$abl" >"$E2E_DIR/ar.md" || fail "report"
  cat "$E2E_DIR/ar.md"
  grep -q '^| host preference needed | yes (the kernels failed with it off and ran with it on) |$' "$E2E_DIR/ar.md" &&
    grep -q '^\*\*preference off\*\* — exercise failed$' "$E2E_DIR/ar.md" &&
    grep -q '^\*\*preference on\*\* — exercise passed$' "$E2E_DIR/ar.md" || fail "report: $(cat "$E2E_DIR/ar.md")"
  grep -q '^| kernel verdict | the exercise passed: the kernels the profile needs compile and compute correctly on this device |$' \
    "$E2E_DIR/ar.md" || fail "report: the verdict"
  lm report --format json "$abl" >"$E2E_DIR/ar.json" || fail "report json"
  "$LM_PYTHON" "$here/../support/json-validate" "$LM_RESULTS_SCHEMA" "$E2E_DIR/ar.json" || fail "report json: schema"
  jq_is "$E2E_DIR/ar.json" '.reports[0] | "\(.kind) \(.preference_needed) \([.arms[].name] | join(","))"' \
    "ablation true preference off,preference on"
  lm_json "$E2E_DIR/ac.json" bench compare "$abl"
  expect_rc 0 "$E2E_DIR/ac.json"
  jq_is "$E2E_DIR/ac.json" '[.rows[] | select(.source | test("preference-")) | .source | split("/") | last] | unique | join(",")' \
    "preference-off,preference-on"
  validate "$E2E_DIR/ac.json"
  lm bench compare --matrix "$abl" >"$E2E_DIR/am.md" || fail "matrix"
  grep -q '| yes | .*abl' "$E2E_DIR/am.md" || fail "matrix: $(cat "$E2E_DIR/am.md")"
  # A user's own folders: the matrix, not the repository's page (how it is generated, how to add a row).
  ! grep -q 'docs/compatibility.md\|## Add a row\|do not edit it by hand' "$E2E_DIR/am.md" ||
    fail "matrix of the user's folders prints the repository's page: $(cat "$E2E_DIR/am.md")"

  # Interrupted in its first arm (the stock run waits in the guest until the test has seen it start):
  # the preference given back, the VM restarted at the level it had, the folder says it failed.
  local gate="$(guest_home vm1)/gate" pid
  rm -f "$gate"
  "$LM_BIN" bench vm1 --ablate-host-preference --repetitions 1 --workload-parser none --out "$E2E_DIR/int" -- \
    sh -c 'touch started; while [ ! -e gate ]; do sleep 0.05; done' >"$E2E_DIR/i.txt" 2>&1 &
  pid=$!
  wait_for 120 "the first arm's run did not start" test -e "$(guest_home vm1)/started"
  kill -INT "$pid"
  touch "$gate"
  wait "$pid" && fail "an interrupted ablation succeeded"
  cat "$E2E_DIR/i.txt"
  [ "$(pref_state)" = "$before" ] || fail "interrupted: the preference not given back: $before -> $(pref_state)"
  plist_xml | cmp -s - "$E2E_DIR/plist.before" || fail "interrupted: the plist changed"
  lm status vm1 --format json | jq -e '.vms[0].restart_pending == false' >/dev/null || fail "interrupted: restart pending"
  jq_is "$E2E_DIR/int/metadata.json" '.preference.restored' true
  jq_is "$E2E_DIR/int/metadata.json" '.failure | test("cancel|interrupt|stopped"; "i")' true
  jq_is "$E2E_DIR/int/metadata.json" .preference_needed null
  sed -n 3p "$E2E_DIR/int/README.md" | grep -q '^\*\*This record FAILED\.\*\*' || fail "interrupted README: $(head -5 "$E2E_DIR/int/README.md")"
  (cd "$E2E_DIR/int" && sha256sum -c --strict SHA256SUMS >/dev/null) || fail "interrupted: sums"
  no_guest_records
}

name=${1:?usage: bench.sh NAME}
"scenario_$name"
check_guest_shells
echo "e2e $name: passed"
