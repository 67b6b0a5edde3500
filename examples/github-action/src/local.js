// The action's local mode, for hosted runners and runners that live inside a VM: this machine is
// probed with the exercise (`lume-metal local probe --require-exercise`), the table goes to the job
// summary, and when the kernels the profile needs run here, the bundle is installed where later
// steps find it (`local install`) and its environment exported for them (`local env
// --github-env`): a later step runs its workload with `env "$LUME_METAL_INJECT" CMD`. The host
// preference is never touched (it cannot be reached from here), so post has nothing to undo.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as core from "@actions/core";
import * as exec from "@actions/exec";
import * as lm from "./lib.js";

// `bin ARGS`, its stdout collected and what it printed on stderr passed on to the log.
async function run(bin, args) {
  try {
    return await exec.getExecOutput(bin, args, {
      silent: true, ignoreReturnCode: true, listeners: { stderr: (d) => process.stderr.write(d) },
    });
  } catch (e) {
    throw new Error(`cannot run ${bin}: ${e.message}`);
  }
}

// `bin ARGS --format json`, whose document is the whole of stdout.
async function runJson(bin, args) {
  const r = await run(bin, [...args, "--format", "json"]);
  let doc = null;
  try { doc = JSON.parse(r.stdout); } catch { doc = null; }
  if (!doc) throw lm.noDocument(bin, args.join(" "), { code: r.exitCode });
  return { code: r.exitCode, doc };
}

async function machineSummary(doc, proven, onUnproven) {
  if (!process.env.GITHUB_STEP_SUMMARY) return;
  const m = doc.machine || {};
  const tri = (v) => (v === true ? "yes" : v === false ? "no" : "unknown");
  const s = core.summary.addHeading("lume-metal local probe", 3);
  if (doc.error) s.addRaw(`<p><strong>${lm.text(doc.error.message)}</strong>${doc.error.hint ? ` — ${lm.text(doc.error.hint)}` : ""}</p>`, true);
  s.addRaw(`<p>looks like a VM: ${tri(m.looks_like_vm)} (kern.hv_vmm_present: ${tri(m.hv_vmm_present)}; stock device: ` +
    `${lm.html((m.stock && m.stock.device) || "not probed")}); host preference: not touched (out of reach from here)</p>`, true);
  if (m.stock || m.shimmed) {
    s.addTable(lm.probeRows(m));
    const note = lm.threadgroupNote(m);
    if (note) s.addRaw(`<p>${lm.text(note)}</p>`, true);
  }
  s.addRaw(proven ? "<p>The kernels the profile needs ran with the shim: later steps run their workload with " +
    "<code>env &quot;$LUME_METAL_INJECT&quot; CMD</code>.</p>" :
    `<p>The kernels the profile needs did not run here${m.kernels_note ? ` (${lm.text(m.kernels_note)})` : ""}: ` +
    (onUnproven === "skip" ? "skipped, nothing exported; later steps run stock.</p>" : "the step fails (on-unproven: fail).</p>"), true);
  await s.write();
}

export async function main(bin) {
  const onUnproven = lm.input("on-unproven") || "fail";
  const profile = lm.input("profile");
  if (onUnproven !== "fail" && onUnproven !== "skip") {
    throw new Error(`on-unproven is '${onUnproven}': it is fail (the step fails when the kernels do not run) or skip`);
  }
  if (lm.input("vms")) throw new Error("the vms input is for fleet mode: local mode works on this machine itself");
  await lm.checkVersion(bin);
  const prefix = lm.input("prefix") || path.join(process.env.RUNNER_TEMP || os.tmpdir(), "lume-metal-image");
  const profileArgs = profile ? ["--profile", profile] : [];

  const probe = await runJson(bin, ["local", "probe", "--require-exercise", ...profileArgs]);
  const doc = probe.doc;
  const json = path.join(process.env.RUNNER_TEMP || os.tmpdir(), `lume-metal-local-probe-${process.pid}.json`);
  fs.writeFileSync(json, JSON.stringify(doc, null, 2) + "\n");
  const m = doc.machine || {};
  const proven = probe.code === 0 && m.kernels_ran === true;
  core.setOutput("json", json);
  core.setOutput("exit-code", String(probe.code));
  core.setOutput("proven", String(proven));
  core.setOutput("looks-like-vm", m.looks_like_vm === true ? "true" : m.looks_like_vm === false ? "false" : "unknown");
  core.setOutput("changed", "false");
  await machineSummary(doc, proven, onUnproven);

  const notProven = doc.error && doc.error.code === "not-proven";
  if (!proven && notProven && onUnproven === "skip") {
    core.notice(`the kernels the profile needs did not run on this machine; nothing exported, later steps run ` +
      `stock (${m.kernels_note || doc.error.message})`, { title: "lume-metal" });
    return;
  }
  if (!proven) {
    if (doc.error) core.error(doc.error.message + (doc.error.hint ? ` (hint: ${doc.error.hint})` : ""), { title: "lume-metal" });
    process.exitCode = probe.code || 1;
    return;
  }
  core.info("lume-metal: the kernels the profile needs ran with the shim; installing the bundle for later steps");
  const inst = await runJson(bin, ["local", "install", "--prefix", prefix]);
  if (inst.code !== 0) {
    core.error(inst.doc.error ? inst.doc.error.message : `local install exited ${inst.code}`, { title: "lume-metal" });
    process.exitCode = inst.code || 1;
    return;
  }
  // NAME=value lines, as lume-metal writes them for $GITHUB_ENV (the injection variable as
  // LUME_METAL_INJECT, PATH with the step's own after it), exported through the toolkit.
  const env = await run(bin, ["local", "env", "--github-env", "--prefix", prefix, ...profileArgs]);
  if (env.exitCode !== 0) throw new Error(`${bin} local env failed: ${env.stderr.trim()}`);
  for (const line of env.stdout.split("\n").filter((l) => l)) {
    const eq = line.indexOf("=");
    if (eq <= 0) throw new Error(`${bin} local env --github-env printed '${line}', not NAME=value`);
    const name = line.slice(0, eq), value = line.slice(eq + 1);
    if (name === "PATH") {
      // Its directories in front of this step's PATH: added through $GITHUB_PATH (core.addPath),
      // as the runner's own tools are, so that a later step's or a setup action's additions keep
      // their place; the whole PATH exported would freeze this step's for every step after it.
      const step = process.env.PATH || "";
      if (step !== "" && !value.endsWith(":" + step))
        throw new Error(`${bin} local env --github-env printed a PATH that does not end with this step's: ${value}`);
      const dirs = (step === "" ? value : value.slice(0, value.length - step.length - 1)).split(":").filter((d) => d);
      // addPath puts each in front: the last first, so that they keep lume-metal's order.
      for (const dir of [...dirs].reverse()) core.addPath(dir);
      core.info(`added to PATH: ${dirs.join(":")}`);
      continue;
    }
    core.exportVariable(name, value);
    core.info(`exported: ${line}`);
  }
  core.setOutput("changed", String(inst.doc.changed === true));
}
