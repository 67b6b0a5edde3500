#!/usr/bin/env bash
# The shell step of action.yml (composite actions have no post step: the job's last step runs this
# again with mode rollback). Inputs arrive as LM_ACTION_* environment variables; outputs go to
# $GITHUB_OUTPUT, and the VMs to roll back at the end to $GITHUB_ENV, as the runner defines them.
# Everything this step reports comes from lume-metal's JSON document (docs/json-output.md); it
# needs bash and jq (macOS 15 ships /usr/bin/jq; earlier: brew install jq).
set -euo pipefail

mode=${LM_ACTION_MODE:-enable}
bin=${LM_ACTION_BIN:-lume-metal}
: "${GITHUB_OUTPUT:?GITHUB_OUTPUT: run this as a step of a GitHub Actions job}"
: "${GITHUB_ENV:?GITHUB_ENV: run this as a step of a GitHub Actions job}"

error() { echo "::error title=lume-metal::$*"; exit 1; }
output() { printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"; }

# Names separated by spaces or newlines; lume-metal itself validates each one.
read -r -a vms <<<"$(printf '%s' "${LM_ACTION_VMS:-}" | tr '\n' ' ')" || true

for vm in "${vms[@]}"; do
  case "$vm" in -*) error "VM name '$vm' starts with '-': the vms input holds VM names only" ;; esac
done

case "$mode" in
  enable)
    [ ${#vms[@]} -gt 0 ] || error "the vms input is empty: name the VM(s) on this runner's host to unlock"
    args=(enable --keep-host --format json --jobs "${LM_ACTION_JOBS:-${#vms[@]}}")
    [ -z "${LM_ACTION_PROFILE:-}" ] || args+=(--profile "$LM_ACTION_PROFILE")
    # Recorded before enable runs: a job cancelled half way still rolls back what was done.
    if [ "${LM_ACTION_ROLLBACK_AT_END:-false}" = true ]; then
      echo "LUME_METAL_ACTION_ROLLBACK_VMS=${vms[*]}" >>"$GITHUB_ENV"
    fi
    ;;
  rollback)
    if [ ${#vms[@]} -eq 0 ]; then
      read -r -a vms <<<"${LUME_METAL_ACTION_ROLLBACK_VMS:-}" || true
    fi
    if [ ${#vms[@]} -eq 0 ]; then
      echo "lume-metal: nothing to roll back (no vms input, and no enable step with rollback-at-end: true ran)"
      output changed false; output restarted false; output results '{}'; output exit-code 0
      exit 0
    fi
    args=(rollback --format json)
    ;;
  *) error "mode '$mode' is neither enable nor rollback" ;;
esac

json=$(mktemp "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/lume-metal-$mode.XXXXXX")
set +e
"$bin" "${args[@]}" "${vms[@]}" >"$json"
rc=$?
set -e
jq -e 'type == "object" and has("vms")' "$json" >/dev/null 2>&1 ||
  jq -e 'type == "object" and has("error")' "$json" >/dev/null 2>&1 ||
  error "$bin ${args[*]} exited $rc without a JSON document (is it lume-metal 0.9 or later?)"

# "changed" only from structured members: the preference written or restored, a VM (re)started,
# guest files uploaded, or a VM rolled back (its guest-files step done; a VM that was never
# enabled has no steps).
jq -r '
  def any_vm(f): [.vms[]? | select(f)] | length > 0;
  "changed=\(.host_preference_changed == true or .host_preference_restored == true
             or any_vm(.restarted == true or .started == true or (.files_uploaded // 0) > 0
                       or any(.steps[]?; .name == "guest-files" and .state == "done")))",
  "restarted=\(any_vm(.restarted == true or .started == true))",
  "results=\([.vms[]? | {(.vm): .result}] | add // {} | tojson)"' "$json" >>"$GITHUB_OUTPUT"
output exit-code "$rc"
output json "$json"
jq -r '.vms[]? | "\(.vm): \(.result) — \(.message)"' "$json"

if [ "$rc" -ne 0 ]; then
  # lume-metal's own words: the run's error, then each failed VM's.
  jq -r '(.error // empty | "::error title=lume-metal::\(.message)\(if .hint then " (hint: \(.hint))" else "" end)"),
         (.vms[]? | select(.result != "ok") | "::error title=lume-metal \(.vm)::\(.error.message // .message)")' "$json"
  exit "$rc"
fi
