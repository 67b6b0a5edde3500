// The action's local mode, for hosted runners and runners that live inside a VM: this machine is
// probed with the exercise (`lume-metal local probe --require-exercise`), the table goes to the job
// summary, and when the kernels the profile needs run here, the bundle is installed where later
// steps find it (`local install`) and its environment appended to $GITHUB_ENV (`local env
// --github-env`): a later step runs its workload with `env "$LUME_METAL_INJECT" CMD`. The host
// preference is never touched (it cannot be reached from here), so post has nothing to undo.
"use strict";
const childProcess = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const lm = require("./lib.js");

// `bin ARGS --format json`, whose document is the whole of stdout; what it printed on stderr is
// passed on to the log.
function runJson(bin, args) {
  const r = childProcess.spawnSync(bin, [...args, "--format", "json"], { encoding: "utf8", maxBuffer: 16 << 20 });
  if (r.stderr) process.stderr.write(r.stderr);
  let doc = null;
  try { doc = JSON.parse(r.stdout); } catch { doc = null; }
  if (r.error || !doc) {
    throw new Error(r.error ? `cannot run ${bin}: ${r.error.message}` :
      `${bin} ${args.join(" ")} exited ${r.signal || r.status} without a JSON document ` +
      `(this action needs lume-metal ${lm.MIN_VERSION} or later)`);
  }
  return { code: r.status, doc };
}

function machineSummary(doc, proven, onUnproven) {
  const m = doc.machine || {};
  const tri = (v) => (v === true ? "yes" : v === false ? "no" : "unknown");
  let md = "### lume-metal local probe\n\n";
  if (doc.error) md += `**${doc.error.message}**${doc.error.hint ? ` — ${doc.error.hint}` : ""}\n\n`;
  md += `looks like a VM: ${tri(m.looks_like_vm)} (kern.hv_vmm_present: ${tri(m.hv_vmm_present)}; stock device: ` +
    `${(m.stock && m.stock.device) || "not probed"}); host preference: not touched (out of reach from here)\n\n`;
  if (m.stock || m.shimmed) md += lm.probeTable(m) + "\n";
  md += proven ? "The kernels the profile needs ran with the shim: later steps run their workload with " +
    "`env \"$LUME_METAL_INJECT\" CMD`.\n" :
    `The kernels the profile needs did not run here${m.kernels_note ? ` (${m.kernels_note})` : ""}: ` +
    (onUnproven === "skip" ? "skipped, nothing exported; later steps run stock.\n" : "the step fails (on-unproven: fail).\n");
  lm.appendSummary(md);
}

async function main(bin) {
  const onUnproven = lm.input("on-unproven") || "fail";
  const profile = lm.input("profile");
  if (onUnproven !== "fail" && onUnproven !== "skip") {
    throw new Error(`on-unproven is '${onUnproven}': it is fail (the step fails when the kernels do not run) or skip`);
  }
  if (lm.input("vms")) throw new Error("the vms input is for fleet mode: local mode works on this machine itself");
  lm.checkVersion(bin);
  const prefix = lm.input("prefix") || path.join(process.env.RUNNER_TEMP || os.tmpdir(), "lume-metal-image");
  const profileArgs = profile ? ["--profile", profile] : [];

  const probe = runJson(bin, ["local", "probe", "--require-exercise", ...profileArgs]);
  const doc = probe.doc;
  const json = path.join(process.env.RUNNER_TEMP || os.tmpdir(), `lume-metal-local-probe-${process.pid}.json`);
  fs.writeFileSync(json, JSON.stringify(doc, null, 2) + "\n");
  const m = doc.machine || {};
  const proven = probe.code === 0 && m.kernels_ran === true;
  lm.setOutput("json", json);
  lm.setOutput("exit-code", String(probe.code));
  lm.setOutput("proven", String(proven));
  lm.setOutput("looks-like-vm", m.looks_like_vm === true ? "true" : m.looks_like_vm === false ? "false" : "unknown");
  lm.setOutput("changed", "false");
  machineSummary(doc, proven, onUnproven);

  const notProven = doc.error && doc.error.code === "not-proven";
  if (!proven && notProven && onUnproven === "skip") {
    console.log(`::notice title=lume-metal::the kernels the profile needs did not run on this machine; ` +
      `nothing exported, later steps run stock (${lm.escapeData(m.kernels_note || doc.error.message)})`);
    return;
  }
  if (!proven) {
    if (doc.error) lm.annotateError(doc.error.message + (doc.error.hint ? ` (hint: ${doc.error.hint})` : ""));
    process.exitCode = probe.code || 1;
    return;
  }
  console.log("lume-metal: the kernels the profile needs ran with the shim; installing the bundle for later steps");
  const inst = runJson(bin, ["local", "install", "--prefix", prefix]);
  if (inst.code !== 0) {
    lm.annotateError(inst.doc.error ? inst.doc.error.message : `local install exited ${inst.code}`);
    process.exitCode = inst.code || 1;
    return;
  }
  const env = childProcess.spawnSync(bin, ["local", "env", "--github-env", "--prefix", prefix, ...profileArgs],
    { encoding: "utf8" });
  if (env.error || env.status !== 0) {
    throw new Error(`${bin} local env failed: ${env.error ? env.error.message : (env.stderr || "").trim()}`);
  }
  lm.appendEnv(env.stdout);
  lm.setOutput("changed", String(inst.doc.changed === true));
  for (const line of env.stdout.split("\n").filter((l) => l)) console.log(`exported: ${line}`);
}

module.exports = { main };
