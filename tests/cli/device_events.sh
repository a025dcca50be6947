# A tracker's troubles reach stderr as they happen, in `tela run --device` and the
# headless demo alike: error records, resyncs and dropped frames with their counts, each
# kind said at most once a second of simulated time, and the source's end.  The trouble
# is put into a copy of a recording at known samples: the recording is 60 Hz, so sample
# k arrives at k/60 s.
# labels: cli;device
. "$(dirname "$0")/lib.sh"

cp "$src/tests/data/sessions/grab.rec" "$out/faults.rec" && chmod u+w "$out/faults.rec" || fail "cannot copy"
# "tela-rec 1 synthetic-samples\n" is 29 bytes; then chunks of 8 (time) + 4 (count) + 46
# (one record) bytes; a record's byte 4 is its error byte, its first two say "PA"
poke() {
	printf "$2" | dd of="$out/faults.rec" bs=1 seek="$1" conv=notrunc 2>/dev/null || fail "cannot write at $1"
}
record_at() { echo $((29 + 58 * $1 + 12)); }
poke $(($(record_at 30) + 4)) '\061' # error 49 at 0.500 s and 0.517 s
poke $(($(record_at 31) + 4)) '\061'
poke "$(record_at 45)" 'x' # not a record: 46 bytes skipped, its frame lost (0.750 s)
poke $(($(record_at 150) + 4)) '\061' # error 49 at 2.500 s

# The event's time: "(at t = T s)" at the end of the line.
when() {
	sed -n 's/.*(at t = \([0-9.]*\) s)$/\1/p'
}
# Whether $1 <= $2 < $3, in decimals.
within() {
	awk -v lo="$1" -v x="$2" -v hi="$3" 'BEGIN { exit !(x != "" && lo <= x + 0 && x + 0 < hi) }'
}

check() { # PREFIX FILE
	err=$2
	e1=$(grep "^$1: tracker: 2 error records (2 so far) (at t = " "$err") || fail "$1: the first two error records not said"
	t1=$(echo "$e1" | when)
	# said once the bytes after sample 29 are read: between samples 29 and 32
	within 0.48 "$t1" 0.54 || fail "$1: the first error records said at $t1 s"
	# the resync and the lost frame come 0.25 s later: held back a whole second
	t_hold=$(awk -v t="$t1" 'BEGIN { printf "%.3f", t + 1.0 }')
	grep -q "^$1: tracker: 1 resync, 46 bytes skipped (1 so far) (at t = $t_hold s)$" "$err" ||
		fail "$1: no resync said at $t_hold s"
	grep -q "^$1: tracker: 1 dropped frame (1 so far) (at t = $t_hold s)$" "$err" ||
		fail "$1: no dropped frame said at $t_hold s"
	e3=$(grep "^$1: tracker: 1 error record (3 so far) (at t = " "$err") || fail "$1: the third error record not said"
	t3=$(echo "$e3" | when)
	within 2.48 "$t3" 2.54 || fail "$1: the third error record said at $t3 s"
	[ "$(grep -c ": tracker: " "$err")" -eq 4 ] || fail "$1: not 4 tracker lines"
	# in the order they happened, the end last
	grep ": tracker: \|: device ended: " "$err" | tail -n 1 | grep -q "^$1: device ended: replay .*faults.rec ended" ||
		fail "$1: the end is not said last"
}

"$tela" run hanging --device "replay:$out/faults.rec@0" --seconds 3 >"$out/run.out" 2>"$out/run.err"
rc=$?
cat "$out/run.err"
[ "$rc" -eq 0 ] || fail "tela run exited with $rc"
check "tela run" "$out/run.err"

"$tela" hanging --headless --device "replay:$out/faults.rec@0" --seconds 3 --out "$out/demo.png" \
	>"$out/demo.out" 2>"$out/demo.err"
rc=$?
cat "$out/demo.err"
[ "$rc" -eq 0 ] || fail "the headless demo exited with $rc"
check "tela" "$out/demo.err"
exit 0
