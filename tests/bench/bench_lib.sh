# Shared by the benchmark scripts on the simulator: tests/e2e/lib.sh (the simulator, its guests,
# lume-metal pointed at it) and the clock arithmetic of their figures.
. "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/openssh.sh"

now() { date +%s.%N; }                  # the wall clock, for differences within one run
elapsed() { echo "$2 - $1" | bc -l; }   # elapsed FROM TO, in seconds
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; } # of stdin's numbers
