// What main.js and post.js share: the runner's files (inputs, outputs, state, summary), running
// lume-metal with its step events shown as they happen and cancellation passed on, and the job
// summary's tables. Plain node, no npm package: the action runs from its checkout as it is.
"use strict";
const childProcess = require("node:child_process");
const crypto = require("node:crypto");
const fs = require("node:fs");
const readline = require("node:readline");

// The first release whose `enable --keep-host --format jsonl` and schema-2 documents this action
// reads (docs/json-output.md); lume-metal refuses nothing older, the action does.
const MIN_VERSION = "0.1.0";

function input(name) {
  return (process.env[`INPUT_${name.replace(/ /g, "_").toUpperCase()}`] || "").trim();
}

// A workflow command's data: the runner reads %, CR and LF escaped; properties also , and :.
function escapeData(s) {
  return String(s).replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}
function escapeProperty(s) {
  return escapeData(s).replace(/:/g, "%3A").replace(/,/g, "%2C");
}
function annotateError(message, title = "lume-metal") {
  console.log(`::error title=${escapeProperty(title)}::${escapeData(message)}`);
}

// NAME<<DELIMITER blocks, as the runner reads GITHUB_OUTPUT and GITHUB_STATE: any value, any line.
function appendFileCommand(variable, name, value) {
  const file = process.env[variable];
  if (!file) throw new Error(`${variable} is not set: run this as a step of a GitHub Actions job`);
  const delimiter = `ghadelimiter_${crypto.randomUUID()}`;
  fs.appendFileSync(file, `${name}<<${delimiter}\n${value}\n${delimiter}\n`);
}
const setOutput = (name, value) => appendFileCommand("GITHUB_OUTPUT", name, value);
const saveState = (name, value) => appendFileCommand("GITHUB_STATE", name, value);
const getState = (name) => process.env[`STATE_${name}`] || "";

function appendSummary(markdown) {
  if (process.env.GITHUB_STEP_SUMMARY) fs.appendFileSync(process.env.GITHUB_STEP_SUMMARY, markdown);
}

// NAME=value lines (lume-metal local env --github-env) for the job's later steps.
function appendEnv(lines) {
  if (!process.env.GITHUB_ENV) throw new Error("GITHUB_ENV is not set: run this as a step of a GitHub Actions job");
  fs.appendFileSync(process.env.GITHUB_ENV, lines);
}

// "lume-metal 0.1.0" -> [0, 1, 0]; null for anything else.
function parseVersion(text) {
  const m = /^lume-metal (\d+)\.(\d+)\.(\d+)\b/.exec(text.trim());
  return m ? m.slice(1, 4).map(Number) : null;
}
function versionBelow(v, min) {
  const w = min.split(".").map(Number);
  for (let i = 0; i < 3; i++) if (v[i] !== w[i]) return v[i] < w[i];
  return false;
}

// Refuses (with the minimum named) a program that is missing, is not lume-metal, or is older.
function checkVersion(bin) {
  const r = childProcess.spawnSync(bin, ["--version"], { encoding: "utf8" });
  if (r.error) {
    throw new Error(`cannot run ${bin}: ${r.error.message}; install lume-metal ${MIN_VERSION} or later ` +
      `(docs/releasing.md: the Homebrew tap or a release tarball) or set the lume-metal input`);
  }
  const v = parseVersion(r.stdout || "");
  if (!v) {
    throw new Error(`${bin} --version said ${JSON.stringify((r.stdout || r.stderr || "").trim())}, ` +
      `not "lume-metal X.Y.Z": this action needs lume-metal ${MIN_VERSION} or later`);
  }
  if (versionBelow(v, MIN_VERSION)) {
    throw new Error(`${bin} is lume-metal ${v.join(".")}; this action needs ${MIN_VERSION} or later ` +
      `(brew upgrade lume-metal)`);
  }
}

// Runs `bin --format jsonl args`: each step event is logged as it happens, the last line is the
// document. SIGINT and SIGTERM (the runner cancelling the step) are passed to lume-metal, which
// undoes what its run did; the promise resolves when it has exited.
function runJsonl(bin, args) {
  return new Promise((resolve) => {
    const child = childProcess.spawn(bin, ["--format", "jsonl", ...args],
      { stdio: ["ignore", "pipe", "inherit"] });
    const forward = (sig) => {
      console.log(`lume-metal: ${sig}: the job is being cancelled, lume-metal undoes what it started`);
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
          console.log(`${who}${event.step} ${event.state} (${Number(event.seconds || 0).toFixed(2)} s)` +
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

// Each failed VM's error, in lume-metal's own words, as an annotation; the run's error (the first
// failed VM's, or one before any VM) once, with the tool's hint.
function annotateFailures(doc) {
  const hint = doc.error && doc.error.hint ? ` (hint: ${doc.error.hint})` : "";
  let runErrorShown = false;
  for (const vm of doc.vms || []) {
    if (vm.result === "ok") continue;
    const message = (vm.error && vm.error.message) || vm.message;
    const isRunError = doc.error && !runErrorShown && doc.error.message === message;
    annotateError(message + (isRunError ? hint : ""), `lume-metal ${vm.vm}`);
    runErrorShown = runErrorShown || isRunError;
  }
  if (doc.error && !runErrorShown) annotateError(doc.error.message + hint);
}

const mdCell = (v) => String(v).replace(/\|/g, "\\|").replace(/\n/g, " ");
const yesNo = (b) => (b === true ? "yes" : b === false ? "no" : "—");

// One VM's probe, stock against shimmed, as `lume-metal probe` shows it.
function probeTable(vm) {
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
  for (const [kernel, r] of Object.entries(vm.exercise || {})) {
    if (kernel === "threadgroup_memory") {
      rows.push([`exercise: threadgroup memory`, "", r.largest == null ? "none ran" : `largest that ran: ${r.largest}`]);
    } else {
      rows.push([`exercise: ${kernel}`, "", r.result + (r.message ? ` (${r.message})` : "")]);
    }
  }
  const table = "| | stock | with the shim |\n|---|---|---|\n" +
    rows.map((r) => `| ${r.map(mdCell).join(" | ")} |`).join("\n") + "\n";
  // A raised answer above what the kernels ran (the published profile's 64 KB) is not a failure.
  const ran = vm.exercise?.threadgroup_memory?.largest;
  if (ran == null || !(shim.max_threadgroup_memory > ran)) return table;
  return table + `\n${shim.max_threadgroup_memory} bytes of threadgroup memory is the value the device ` +
    `reports with the shim; kernels run with up to ${ran}. llama.cpp uses the reported value only in assertions.\n`;
}

function summarize(title, doc) {
  let md = `### ${title}\n\n`;
  if (doc.error) md += `**${mdCell(doc.error.message)}**${doc.error.hint ? ` — ${mdCell(doc.error.hint)}` : ""}\n\n`;
  for (const vm of doc.vms || []) {
    md += `#### ${mdCell(vm.vm)}: ${vm.result}\n\n${mdCell(vm.message || "")}\n\n`;
    if (vm.stock || vm.shimmed) md += probeTable(vm) + "\n";
  }
  appendSummary(md);
}

// VM names separated by spaces or newlines; lume-metal itself validates each one.
function vmList(text) {
  return text.split(/\s+/).filter((s) => s !== "");
}

module.exports = {
  MIN_VERSION, input, annotateError, escapeData, setOutput, saveState, getState, checkVersion, runJsonl,
  annotateFailures, summarize, vmList, appendSummary, appendEnv, probeTable,
};
