// The action's post step: the runner runs it at the end of the job whatever happened before
// (post-if: always(): success, failure, cancellation). It rolls back the VMs main.js saved before
// it enabled them; nothing when rollback-at-end was false or main stopped before enabling, nor in
// local mode (local.js), which changes nothing outside the job.
import * as core from "@actions/core";
import * as lm from "./lib.js";

async function post() {
  if (lm.input("mode") === "local") {
    core.info("lume-metal: local mode: nothing to roll back (the host preference was out of reach; the bundle " +
      "installed for later steps is in RUNNER_TEMP or the prefix given)");
    return;
  }
  const vms = lm.vmList(core.getState("vms"));
  if (vms.length === 0) {
    core.info("lume-metal: nothing to roll back (rollback-at-end was false, or the main step enabled nothing)");
    return;
  }
  const bin = core.getState("bin") || "lume-metal";
  const r = await lm.runJsonl(bin, ["rollback", ...vms]);
  if (!r.doc) throw lm.noDocument(bin, "rollback", r);
  for (const v of r.doc.vms || []) core.info(`${v.vm}: ${v.result} — ${v.message}`);
  await lm.summarize("rollback", r.doc);
  if (r.code !== 0) {
    lm.annotateFailures(r.doc);
    process.exitCode = r.code;
  }
}

post().catch(lm.fail);
