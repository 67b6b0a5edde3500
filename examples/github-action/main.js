// The action's main step: `lume-metal enable --keep-host VM…` with outputs and a job summary from
// lume-metal's JSON document (local mode: local.js). The VMs are saved for post.js before enable runs, so that a job
// cancelled or failed at any point still rolls back what was done.
"use strict";
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const lm = require("./lib.js");
const local = require("./local.js");

async function main() {
  const bin = lm.input("lume-metal") || "lume-metal";
  const mode = lm.input("mode") || "fleet";
  if (mode === "local") return local.main(bin);
  if (mode !== "fleet") throw new Error(`mode is '${mode}': it is fleet (VMs on this runner's host) or local (this machine)`);
  const vms = lm.vmList(lm.input("vms"));
  const jobs = lm.input("jobs") || String(vms.length);
  const profile = lm.input("profile");
  const rollbackAtEnd = lm.input("rollback-at-end") || "true";

  if (vms.length === 0) throw new Error("the vms input is empty: name the VM(s) on this runner's host to unlock");
  for (const vm of vms) {
    if (vm.startsWith("-")) throw new Error(`VM name '${vm}' starts with '-': the vms input holds VM names only`);
  }
  if (rollbackAtEnd !== "true" && rollbackAtEnd !== "false") {
    throw new Error(`rollback-at-end is '${rollbackAtEnd}': it is true (the post step rolls back) or false`);
  }
  lm.checkVersion(bin);
  if (rollbackAtEnd === "true") {
    lm.saveState("vms", vms.join(" "));
    lm.saveState("bin", bin);
  }

  const args = ["enable", "--keep-host", "--jobs", jobs];
  if (profile) args.push("--profile", profile);
  args.push(...vms);
  const r = await lm.runJsonl(bin, args);
  if (!r.doc) {
    throw new Error(r.spawnError ? `cannot run ${bin}: ${r.spawnError.message}` :
      `${bin} ${args.join(" ")} exited ${r.signal || r.code} without a JSON document ` +
      `(this action needs lume-metal ${lm.MIN_VERSION} or later)`);
  }
  const doc = r.doc;
  const json = path.join(process.env.RUNNER_TEMP || os.tmpdir(), `lume-metal-enable-${process.pid}.json`);
  fs.writeFileSync(json, JSON.stringify(doc, null, 2) + "\n");

  // "changed" only from structured members: the preference written, a VM (re)started, guest files
  // uploaded.
  const vmsOut = doc.vms || [];
  const restarted = vmsOut.some((v) => v.restarted === true || v.started === true);
  const changed = doc.host_preference_changed === true || restarted || vmsOut.some((v) => (v.files_uploaded || 0) > 0);
  lm.setOutput("changed", String(changed));
  lm.setOutput("restarted", String(restarted));
  lm.setOutput("results", JSON.stringify(Object.fromEntries(vmsOut.map((v) => [v.vm, v.result]))));
  lm.setOutput("exit-code", String(r.code));
  lm.setOutput("json", json);
  for (const v of vmsOut) console.log(`${v.vm}: ${v.result} — ${v.message}`);
  lm.summarize("lume-metal enable", doc);
  if (r.code !== 0) {
    lm.annotateFailures(doc);
    process.exitCode = r.code;
  }
}

main().catch((e) => {
  lm.annotateError(e.message);
  process.exitCode = 1;
});
