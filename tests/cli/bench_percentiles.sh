# labels: cli;bench
# tela bench collisions' step statistics are nearest-rank: with fewer than 100 steps the p99
# is the slowest step, so neither the p99 nor the mean can exceed the max it prints.
. "$(dirname "$0")/lib.sh"
"$tela" bench collisions --case pile --seconds 0.05 >"$out/bench.txt" 2>&1 || { cat "$out/bench.txt"; fail "bench exited with $?"; }
cat "$out/bench.txt"
line=$(grep '^pile 33x33: 50 steps' "$out/bench.txt") || fail "no line for 50 pile steps"
set -- $(echo "$line" | sed -n 's/.*mean \([0-9.]*\) ms, p50 \([0-9.]*\) ms, p99 \([0-9.]*\) ms, max \([0-9.]*\) ms.*/\1 \2 \3 \4/p')
[ $# -eq 4 ] || fail "cannot read mean, p50, p99 and max from: $line"
awk -v mean="$1" -v p50="$2" -v p99="$3" -v max="$4" 'BEGIN {
	if (p99 != max) { print "FAIL: 50 steps, but p99 " p99 " is not the slowest step " max; exit 1 }
	if (mean > max || p50 > p99) { print "FAIL: mean " mean ", p50 " p50 " against p99 " p99 ", max " max; exit 1 }
}' || exit 1
