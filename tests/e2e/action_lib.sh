# What the GitHub Action's tests share (github_action.sh, github_action_local.sh,
# github_action_version.sh): one phase of the action — its bundle, dist/, with the toolkit in it,
# on this machine's node — run as a runner runs a node24 action (tests/support/run-node-action),
# and its outputs. The runner's tool cache and GITHUB_PATH are kept across the test's jobs.
action=$(cd "$here/../../examples/github-action" && pwd)
runner="$here/../support/run-node-action"
# The inputs every step gets: until lume-metal is on the runner's PATH, it is given the built program.
ACTION_INPUTS=(--input "lume-metal=$LM_BIN")
export RUNNER_TOOL_CACHE="$E2E_DIR/tool_cache" GITHUB_PATH="$E2E_DIR/github_path"
mkdir -p "$RUNNER_TOOL_CACHE"; : >"$GITHUB_PATH"

# step OUT PHASE INPUT...: one phase of the action with those inputs (the runner gives post the
# step's inputs too); outputs in OUT, exit code in STEP_RC, what it printed in OUT.log.
step() {
  local out=$1 phase=$2; shift 2
  local args=("${ACTION_INPUTS[@]}") i
  for i in "$@"; do args+=(--input "$i"); done
  set +e
  "$runner" "$action" "$phase" "${args[@]}" >"$out" 2>"$out.log"
  STEP_RC=$?
  set -e
}
output() { jq -r --arg n "$2" '.[$n]' "$1"; }
expect_output() { # OUT NAME VALUE
  local got; got=$(output "$1" "$2")
  [ "$got" = "$3" ] || fail "output $2: expected '$3', found '$got' ($(cat "$1" "$1.log"))"
}
# summary_row FILE CELL...: FILE (a job summary) has a table row of exactly these cells.
summary_row() {
  local file=$1 row="<tr>" c; shift
  for c in "$@"; do row+="<td>$c</td>"; done
  grep -qF "$row</tr>" "$file"
}
