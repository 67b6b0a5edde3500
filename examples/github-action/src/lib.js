// What main.js and post.js share: inputs, outputs, state, annotations and the job summary through
// the Actions toolkit (@actions/core), lume-metal run with its step events shown as they happen and
// cancellation passed on, and the job summary's tables. Bundled with the toolkit into dist/
// (build.mjs); the runner runs dist/, never this file.
import * as childProcess from "node:child_process";
import * as readline from "node:readline";
import * as core from "@actions/core";
import * as exec from "@actions/exec";

// The first release whose `enable --keep-host --format jsonl` and schema-2 documents this action
// reads (docs/json-output.md); lume-metal refuses nothing older, the action does.
export const MIN_VERSION = "0.1.0";

export const input = (name) => core.getInput(name);

// VM names separated by spaces or newlines; lume-metal itself validates each one.
export const vmList = (text) => text.split(/\s+/).filter((s) => s !== "");

// "lume-metal 0.1.0" -> [0, 1, 0]; null for anything else.
export function parseVersion(text) {
  const m = /^lume-metal (\d+)\.(\d+)\.(\d+)\b/.exec(text.trim());
  return m ? m.slice(1, 4).map(Number) : null;
}
function versionBelow(v, min) {
  const w = min.split(".").map(Number);
  for (let i = 0; i < 3; i++) if (v[i] !== w[i]) return v[i] < w[i];
  return false;
}

// Refuses (with the minimum named) a program that is missing, is not lume-metal, or is older.
export async function checkVersion(bin) {
  let r;
  try {
    r = await exec.getExecOutput(bin, ["--version"], { silent: true, ignoreReturnCode: true });
  } catch (e) {
    throw new Error(`cannot run ${bin}: ${e.message}; install lume-metal ${MIN_VERSION} or later ` +
      `(the version input, the Homebrew tap or a release tarball: docs/releasing.md) or set the lume-metal input`);
  }
  const v = parseVersion(r.stdout);
  if (!v) {
    throw new Error(`${bin} --version said ${JSON.stringify((r.stdout || r.stderr).trim())}, ` +
      `not "lume-metal X.Y.Z": this action needs lume-metal ${MIN_VERSION} or later`);
  }
  if (versionBelow(v, MIN_VERSION)) {
    throw new Error(`${bin} is lume-metal ${v.join(".")}; this action needs ${MIN_VERSION} or later ` +
      `(the version input, or brew upgrade lume-metal)`);
  }
}

// Runs `bin --format jsonl args`: each step event is logged as it happens, the last line is the
// document. SIGINT and SIGTERM (the runner cancelling the step) are passed to lume-metal, which
// undoes what its run did; the promise resolves when it has exited. node:child_process and not
// @actions/exec: exec gives no handle on the child, and cancellation has to reach it.
export function runJsonl(bin, args) {
  return new Promise((resolve) => {
    const child = childProcess.spawn(bin, ["--format", "jsonl", ...args],
      { stdio: ["ignore", "pipe", "inherit"] });
    const forward = (sig) => {
      core.info(`lume-metal: ${sig}: the job is being cancelled, lume-metal undoes what it started`);
      child.kill(sig);
    };
    process.on("SIGINT", forward).on("SIGTERM", forward);
    let last = "", spawnError = null;
    readline.createInterface({ input: child.stdout }).on("line", (line) => {
      let event = null;
      try { event = JSON.parse(line); } catch { /* not JSON: kept as the last line, reported below */ }
      if (event && event.event === "step") {
        if (event.state !== "started") {
          const who = event.vm ? `${event.vm}: ` : "";
          core.info(`${who}${event.step} ${event.state} (${Number(event.seconds || 0).toFixed(2)} s)` +
            `${event.detail ? `: ${event.detail}` : ""}`);
        }
      } else {
        last = line;
      }
    });
    child.on("error", (e) => { spawnError = e; });
    child.on("close", (code, signal) => {
      process.removeListener("SIGINT", forward).removeListener("SIGTERM", forward);
      let doc = null;
      try { doc = JSON.parse(last); } catch { doc = null; }
      if (doc !== null && (typeof doc !== "object" || !("schema" in doc))) doc = null;
      resolve({ code: spawnError ? 127 : (code ?? 128), signal, doc, spawnError });
    });
  });
}

// The error for a run that left no document.
export function noDocument(bin, what, r) {
  return new Error(r.spawnError ? `cannot run ${bin}: ${r.spawnError.message}` :
    `${bin} ${what} exited ${r.signal || r.code} without a JSON document ` +
    `(this action needs lume-metal ${MIN_VERSION} or later)`);
}

// Each failed VM's error, in lume-metal's own words, as an annotation; the run's error (the first
// failed VM's, or one before any VM) once, with the tool's hint.
export function annotateFailures(doc) {
  const hint = doc.error && doc.error.hint ? ` (hint: ${doc.error.hint})` : "";
  let runErrorShown = false;
  for (const vm of doc.vms || []) {
    if (vm.result === "ok") continue;
    const message = (vm.error && vm.error.message) || vm.message;
    const isRunError = doc.error && !runErrorShown && doc.error.message === message;
    core.error(message + (isRunError ? hint : ""), { title: `lume-metal ${vm.vm}` });
    runErrorShown = runErrorShown || isRunError;
  }
  if (doc.error && !runErrorShown) core.error(doc.error.message + hint, { title: "lume-metal" });
}

// The summary is HTML (core.summary's tables): text from lume-metal is escaped, never markup.
export const html = (v) => String(v ?? "").replace(/&/g, "&amp;").replace(/</g, "&lt;")
  .replace(/>/g, "&gt;").replace(/"/g, "&quot;");
// lume-metal's messages and hints quote commands in backticks, as a terminal shows them; in the
// summary (HTML, where Markdown is not read inside a table cell) they become <code>, and a lone
// backtick stays a character (escaped).
export const text = (v) => html(v).replace(/`([^`]+)`/g, "<code>$1</code>").replace(/`/g, "&#96;");
// The device's known defects among the exercise's kernels (lm_exercise_is_defect): reported, not
// required.
const DEFECTS = ["nocopy_buffer", "indirect_command_buffer"];
const yesNo = (b) => (b === true ? "yes" : b === false ? "no" : "—");
const header = (cells) => cells.map((c) => ({ data: c, header: true }));

// One VM's probe, stock against shimmed, as `lume-metal probe` shows it: rows for core.summary.
export function probeRows(vm) {
  const stock = vm.stock || {}, shim = vm.shimmed || {};
  const rows = [
    ["device", stock.device ?? "—", shim.device ?? "—"],
    ["highest Apple family", stock.highest_apple_family ?? "—", shim.highest_apple_family ?? "—"],
    ["Metal3", yesNo(stock.families?.Metal3), yesNo(shim.families?.Metal3)],
    ["max threadgroup memory (reported)", stock.max_threadgroup_memory ?? "—", shim.max_threadgroup_memory ?? "—"],
    ["shim active", yesNo(stock.shim_active), yesNo(shim.shim_active)],
  ];
  for (const flag of ["llama_simdgroup_reduction", "llama_simdgroup_mm", "llama_bfloat16", "llama_tensor",
    "mlx_residency_risk"]) {
    rows.push([flag, yesNo(stock.workloads?.[flag]), yesNo(shim.workloads?.[flag])]);
  }
  // The exercise as `lume-metal probe --exercise` prints it (host/cli/output_exercise.c): the
  // feature kernels' pass or fail, the threadgroup memory that runs, then the device's known
  // defects, "not shown" (the kernel passed: the defect did not show) or "shown".
  const exercise = Object.entries(vm.exercise || {});
  for (const [kernel, r] of exercise) {
    if (kernel === "threadgroup_memory" || DEFECTS.includes(kernel)) continue;
    rows.push([`exercise: ${kernel}`, " ", r.result + (r.message ? `: ${r.message}` : "")]);
  }
  const tg = vm.exercise?.threadgroup_memory;
  if (tg) rows.push(["exercise: threadgroup memory that runs", " ", tg.largest == null ? "none" : `${tg.largest} bytes`]);
  for (const [kernel, r] of exercise) {
    if (!DEFECTS.includes(kernel)) continue;
    const word = r.result === "pass" ? "not shown" : r.result === "fail" ? "shown" : "error";
    rows.push([`known defect (reported, not required): ${kernel}`, " ", word + (r.message ? `: ${r.message}` : "")]);
  }
  return [header([" ", "stock", "with the shim"]), ...rows.map((r) => r.map(text))];
}

// A raised answer above what the kernels ran (the published profile's 64 KB) is not a failure.
export function threadgroupNote(vm) {
  const ran = vm.exercise?.threadgroup_memory?.largest;
  const reported = vm.shimmed?.max_threadgroup_memory;
  if (ran == null || !(reported > ran)) return null;
  return `${reported} bytes of threadgroup memory is the value the device reports with the shim; kernels run ` +
    `with up to ${ran}. llama.cpp uses the reported value only in assertions.`;
}

// The exercise's feature kernels (not the threadgroup sizes, nor the device's known defects), as
// one cell the way `lume-metal status` shows them: "3/3 pass", or "—" when none was run.
function kernelsCell(vm) {
  const kernels = Object.entries(vm.exercise || {}).filter(([k]) => k !== "threadgroup_memory" && !DEFECTS.includes(k));
  if (kernels.length === 0) return "—";
  return `${kernels.filter(([, r]) => r.result === "pass").length}/${kernels.length} pass`;
}

// The line that ends the run, as the CLI's (lm_cli_flow_recap, host/cli/output_flow.c): "2 enabled,
// 0 failed in 3.1 s", "1 rolled back, 1 unsupported, 0 failed in 0.4 s"; from the document's recap
// and seconds (docs/json-output.md), counted from its VMs when it has no recap.
export function recapLine(command, doc) {
  const done = { enable: "enabled", rollback: "rolled back" }[command] ?? `${command} done`;
  const vms = doc.vms || [];
  const r = doc.recap ?? {
    ok: vms.filter((vm) => vm.result === "ok").length,
    unsupported: vms.filter((vm) => vm.result === "unsupported").length,
    failed: vms.filter((vm) => vm.result !== "ok" && vm.result !== "unsupported").length,
  };
  const seconds = typeof doc.seconds === "number" ? ` in ${doc.seconds.toFixed(1)} s` : "";
  return `${r.ok} ${done}, ${r.unsupported > 0 ? `${r.unsupported} unsupported, ` : ""}${r.failed} failed${seconds}`;
}

// The fleet as one table, a row per VM; below it, each VM's probe table folded away; last the
// recap line. command: "enable" or "rollback".
export async function summarize(command, doc) {
  if (!process.env.GITHUB_STEP_SUMMARY) return;
  const s = core.summary.addHeading(html(`lume-metal ${command}`), 3);
  if (doc.error) s.addRaw(`<p><strong>${text(doc.error.message)}</strong>${doc.error.hint ? ` — ${text(doc.error.hint)}` : ""}</p>`, true);
  const vms = doc.vms || [];
  if (vms.length > 0) {
    s.addTable([header(["VM", "result", "manager", "enabled", "restarted", "highest Apple family", "kernels", "message"]),
      ...vms.map((vm) => [vm.vm, vm.result, vm.manager ?? "—", yesNo(vm.enabled),
        yesNo(vm.restarted === true || vm.started === true), vm.shimmed?.highest_apple_family ?? "—",
        kernelsCell(vm), vm.message ?? ""].map(text))]);
  }
  for (const vm of vms) {
    if (!vm.stock && !vm.shimmed) continue;
    const note = threadgroupNote(vm);
    s.addRaw(`<details><summary>${html(vm.vm)}: the probe, stock and with the shim</summary>`, true)
      .addTable(probeRows(vm));
    if (note) s.addRaw(`<p>${text(note)}</p>`, true);
    s.addRaw("</details>", true);
  }
  s.addRaw(`<p>${html(recapLine(command, doc))}</p>`, true);
  await s.write();
}

// A step's failure: its message as an error annotation titled lume-metal, and exit code 1.
export function fail(e) {
  core.error(e.message, { title: "lume-metal" });
  process.exitCode = 1;
}
