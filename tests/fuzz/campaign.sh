#!/usr/bin/env bash
# The long fuzz campaign: every target for SECONDS, one at a time, each from a fresh copy of its
# committed corpus, printing one Markdown table row per target (the figures docs/testing.md keeps).
#
#   campaign.sh SECONDS WORKDIR CORPUS_ROOT FUZZER...
#
# A target stops at its first finding: the input is kept as WORKDIR/<target>/crash-* (or leak-*,
# timeout-*, oom-*); fix the parser, add the input to CORPUS_ROOT/<target>/ and run again.
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: campaign.sh SECONDS WORKDIR CORPUS_ROOT FUZZER..." >&2; exit 2; }
seconds=$1 work=$2 corpus_root=$3
shift 3
[[ $seconds =~ ^[0-9]+$ ]] || { echo "campaign.sh: SECONDS must be a number (got '$seconds')" >&2; exit 2; }

stat() { sed -n "s/^stat::$1: *//p" "$2" | tail -n 1; }

failed=0
echo "| target | executions | seconds | executions/s | edges covered | corpus | findings |"
echo "|---|---:|---:|---:|---:|---:|---|"
for fuzzer in "$@"; do
	name=$(basename "$fuzzer")
	name=${name#fuzz_}
	dir=$work/$name
	rm -rf "$dir"
	mkdir -p "$dir/corpus"
	rc=0
	start=$SECONDS
	"$fuzzer" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 -artifact_prefix="$dir/" \
		"$dir/corpus" "$corpus_root/$name" >"$dir/log" 2>&1 || rc=$?
	execs=$(stat number_of_executed_units "$dir/log")
	rate=$(stat average_exec_per_sec "$dir/log")
	cov=$(grep -o 'cov: [0-9]*' "$dir/log" | tail -n 1 | cut -d' ' -f2)
	units=$(find "$dir/corpus" "$corpus_root/$name" -type f | wc -l)
	findings=$(find "$dir" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) \
		-printf '%f ' )
	if [ "$rc" -ne 0 ] || [ -n "$findings" ]; then
		failed=1
		findings="${findings:-exit $rc} (see $dir/log)"
	fi
	secs=$((SECONDS - start))
	echo "| $name | ${execs:-?} | $secs | ${rate:-?} | ${cov:-?} | $units | ${findings:-none} |"
done
exit $failed
