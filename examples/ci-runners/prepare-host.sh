#!/bin/sh
# The host-side half for executors that start every job in a fresh clone (GitLab's Tart executor,
# an Orchard worker, any custom executor): the host preference must be on before the clone
# starts, because a VM reads it once, when its process starts (docs/ci-topologies.md). The job in
# the clone then uses `lume-metal local install|env` (or the GitHub Action's `mode: local`).
#
#   prepare-host.sh [COMMAND ARGS...]
#
# Sets the preference with `lume-metal host enable --keep` (idempotent: a host already unlocked
# is confirmed in a few milliseconds and left as it is; kept: the jobs' own rollbacks leave it
# on; `lume-metal host disable` gives back exactly what was there), then replaces itself with
# COMMAND, the executor's own prepare step, so that it can wrap one:
#
#   [runners.custom]                  # GitLab Runner's config.toml, with gitlab-tart-executor
#     prepare_exec = "/usr/local/share/lume-metal/examples/ci-runners/prepare-host.sh"
#     prepare_args = ["gitlab-tart-executor", "prepare"]
#
# When the preference cannot be set, COMMAND does not run and the hook exits with
# $SYSTEM_FAILURE_EXIT_CODE (GitLab's "system failure", so the job is retried elsewhere rather
# than run on a VM that would keep the restricted level), or 1 outside GitLab. LUME_METAL names
# the program (default: lume-metal on PATH); lume-metal's own variables (LUME_METAL_PREFS_DIR...)
# pass through.
set -u
lume_metal=${LUME_METAL:-lume-metal}

if ! out=$("$lume_metal" host enable --keep 2>&1); then
	printf 'lume-metal prepare hook: the host preference is not set, so a clone started now would keep the restricted GPU level:\n%s\n' \
	    "$out" >&2
	exit "${SYSTEM_FAILURE_EXIT_CODE:-1}"
fi
printf 'lume-metal prepare hook: %s\n' "$out"
[ "$#" -eq 0 ] && exit 0
exec "$@"
