// The action's post step: the runner runs it at the end of the job whatever happened before
// (post-if: always(): success, failure, cancellation). It rolls back the VMs main.js saved before
// it enabled them; nothing when rollback-at-end was false or main stopped before enabling, nor in
// local mode (local.js), which changes nothing outside the job.
"use strict";
const lm = require("./lib.js");

async function post() {
  if (lm.input("mode") === "local") {
    console.log("lume-metal: local mode: nothing to roll back (the host preference was out of reach; the bundle " +
      "installed for later steps is in RUNNER_TEMP or the prefix given)");
    return;
  }
  const vms = lm.vmList(lm.getState("vms"));
  if (vms.length === 0) {
    console.log("lume-metal: nothing to roll back (rollback-at-end was false, or the main step enabled nothing)");
    return;
  }
  const bin = lm.getState("bin") || "lume-metal";
  const r = await lm.runJsonl(bin, ["rollback", ...vms]);
  if (!r.doc) {
    throw new Error(r.spawnError ? `cannot run ${bin}: ${r.spawnError.message}` :
      `${bin} rollback exited ${r.signal || r.code} without a JSON document ` +
      `(this action needs lume-metal ${lm.MIN_VERSION} or later)`);
  }
  for (const v of r.doc.vms || []) console.log(`${v.vm}: ${v.result} — ${v.message}`);
  lm.summarize("lume-metal rollback", r.doc);
  if (r.code !== 0) {
    lm.annotateFailures(r.doc);
    process.exitCode = r.code;
  }
}

post().catch((e) => {
  lm.annotateError(e.message);
  process.exitCode = 1;
});
