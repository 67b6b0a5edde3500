// The action's main step: `lume-metal enable --keep-host VM…` with outputs and a job summary from
// lume-metal's JSON document (local mode: local.js). The VMs are saved for post.js before enable
// runs, so that a job cancelled or failed at any point still rolls back what was done.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as core from "@actions/core";
import * as lm from "./lib.js";
import { program } from "./install.js";
import * as local from "./local.js";

// `--host-preference` (always, auto, never) only when the input is given: an empty input leaves
// lume-metal's own default, and a lume-metal without the option is not handed it.
const HOST_PREFERENCE = ["always", "auto", "never"];

async function main() {
  const mode = lm.input("mode") || "fleet";
  if (mode !== "fleet" && mode !== "local") {
    throw new Error(`mode is '${mode}': it is fleet (VMs on this runner's host) or local (this machine)`);
  }
  if (mode === "local") return local.main(await program());
  const vms = lm.vmList(lm.input("vms"));
  const jobs = lm.input("jobs") || String(vms.length);
  const profile = lm.input("profile");
  const hostPreference = lm.input("host-preference");
  const rollbackAtEnd = lm.input("rollback-at-end") || "true";

  if (vms.length === 0) throw new Error("the vms input is empty: name the VM(s) on this runner's host to unlock");
  for (const vm of vms) {
    if (vm.startsWith("-")) throw new Error(`VM name '${vm}' starts with '-': the vms input holds VM names only`);
  }
  if (rollbackAtEnd !== "true" && rollbackAtEnd !== "false") {
    throw new Error(`rollback-at-end is '${rollbackAtEnd}': it is true (the post step rolls back) or false`);
  }
  if (hostPreference && !HOST_PREFERENCE.includes(hostPreference)) {
    throw new Error(`host-preference is '${hostPreference}': it is ${HOST_PREFERENCE.join(", ")} or empty ` +
      "(lume-metal's default)");
  }
  const bin = await program();
  await lm.checkVersion(bin);
  if (rollbackAtEnd === "true") {
    core.saveState("vms", vms.join(" "));
    core.saveState("bin", bin);
  }

  const args = ["enable", "--keep-host", "--jobs", jobs];
  if (profile) args.push("--profile", profile);
  if (hostPreference) args.push("--host-preference", hostPreference);
  args.push(...vms);
  const r = await lm.runJsonl(bin, args);
  if (!r.doc) throw lm.noDocument(bin, args.join(" "), r);
  const doc = r.doc;
  const json = path.join(process.env.RUNNER_TEMP || os.tmpdir(), `lume-metal-enable-${process.pid}.json`);
  fs.writeFileSync(json, JSON.stringify(doc, null, 2) + "\n");

  // "changed" only from structured members: the preference written, a VM (re)started, guest files
  // uploaded.
  const vmsOut = doc.vms || [];
  const restarted = vmsOut.some((v) => v.restarted === true || v.started === true);
  const changed = doc.host_preference_changed === true || restarted || vmsOut.some((v) => (v.files_uploaded || 0) > 0);
  core.setOutput("changed", String(changed));
  core.setOutput("restarted", String(restarted));
  core.setOutput("results", JSON.stringify(Object.fromEntries(vmsOut.map((v) => [v.vm, v.result]))));
  core.setOutput("exit-code", String(r.code));
  core.setOutput("json", json);
  for (const v of vmsOut) core.info(`${v.vm}: ${v.result} — ${v.message}`);
  await lm.summarize("enable", doc);
  if (r.code !== 0) {
    lm.annotateFailures(doc);
    process.exitCode = r.code;
  }
}

main().catch(lm.fail);
