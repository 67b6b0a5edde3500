# lume_metal_diff: the task's diff for `ansible-playbook --diff`, made from lume-metal's own JSON
# (docs/json-output.md): `status --format json` before and after the run (the host preference and
# each VM's guest files) and the run's document (the guest files it added or removed, in its
# steps' words); in check mode, which runs lume-metal --dry-run, the plan: each step's "would ...".
# Runs on the controller and touches nothing; `changed` is the role's, as the run task would have
# reported it (tasks/run.yml).
from __future__ import annotations

import json

from ansible.plugins.action import ActionBase

ARGS = {"before", "after", "run", "header", "changed"}


def _doc(text):
    """The document: Ansible's templating has made the JSON text a dict already, or not."""
    if isinstance(text, dict):
        return text
    try:
        doc = json.loads(text or "")
    except (TypeError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _state(doc):
    """The host preference and each VM's guest files, one line each."""
    if doc is None:
        return "(lume-metal status gave no JSON document)\n"
    p = doc.get("host_preference") or {}
    value = p.get("value") if p.get("present") else "absent"
    lines = [f"host preference {p.get('domain', '?')} {p.get('key', '?')}: {value}"]
    for vm in doc.get("vms") or []:
        files = f"~/.local/share/lume-metal, bundle {vm['bundle']}" if vm.get("enabled") and vm.get("bundle") else "none"
        lines.append(f"{vm.get('vm')}: guest files {files}")
    return "\n".join(lines) + "\n"


def _steps(doc):
    """What the run itself said it added (install) and removed (guest-files)."""
    lines = []
    for vm in (doc or {}).get("vms") or []:
        for step in vm.get("steps") or []:
            if step.get("state") == "done" and step.get("name") in ("install", "guest-files"):
                # install: "BUNDLE: N files uploaded and verified by SHA-256"; guest-files: "removed ..."
                added = "added " if step["name"] == "install" else ""
                lines.append(f"{vm.get('vm')}: {added}{step.get('detail', '')}")
    return "".join(line + "\n" for line in lines)


def _plan(doc):
    """A dry run's plan (check mode): each step that says what it would do, in its own words."""
    lines = []
    for vm in (doc or {}).get("vms") or []:
        for step in vm.get("steps") or []:
            detail = step.get("detail") or ""
            if detail.startswith("would ") or " would " in detail:
                lines.append(f"{vm.get('vm')}: {step.get('name')}: {detail}")
    return "".join(line + "\n" for line in lines)


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self._task.args
        unknown = set(args) - ARGS
        if unknown:
            return dict(result, failed=True, msg=f"lume_metal_diff: unknown arguments {sorted(unknown)}")
        header = args.get("header", "lume-metal")
        result["changed"] = bool(args.get("changed", False))
        run = _doc(args.get("run"))
        # Check mode runs lume-metal --dry-run: nothing changes, so the diff is the plan.
        planned = _plan(run) if (run or {}).get("dry_run") else ""
        result["diff"] = {
            "before": _state(_doc(args.get("before"))),
            "after": _state(_doc(args.get("after"))) + _steps(run) + planned,
            "before_header": f"{header} (before)",
            "after_header": f"{header} (after)",
        }
        return result
