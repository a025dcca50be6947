# SIGINT and SIGTERM end a long `tela run --stats` within a second (checked against a
# generous 5 s: a loaded machine under the sanitizers), with exit 130 and 143, and every
# row of the statistics whole: the header's column count, consecutive steps, and a
# newline at the very end.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/signal.inc"

for sig in INT TERM; do
	csv="$out/$sig.csv"
	"$tela" run hanging --seconds 100000 --stats "$csv" >"$out/$sig.out" 2>"$out/$sig.err" &
	pid=$!
	start_guard $pid
	# until it has written rows (the file's buffer reaches the disk in 4 KiB pieces)
	waited=0
	while [ "$(wc -l <"$csv" 2>/dev/null || echo 0)" -lt 100 ]; do
		[ $waited -lt 600 ] || { kill -KILL $pid; kill $guard; fail "$sig: no statistics rows after 60 s"; }
		sleep 0.1
		waited=$((waited + 1))
	done
	signal_and_wait $pid $sig
	echo "SIG$sig: exit $rc after $took s; $(cat "$out/$sig.err")"
	case $sig in INT) want=130 ;; TERM) want=143 ;; esac
	[ $rc -eq $want ] || fail "SIG$sig: exit $rc, expected $want"
	awk -v t="$took" 'BEGIN { exit !(t < 5.0) }' || fail "SIG$sig: took $took s to end"
	grep -q "stopped by SIG$sig after [0-9]* steps" "$out/$sig.err" || fail "SIG$sig: no message saying so"
	[ -s "$out/$sig.out" ] && fail "SIG$sig: a summary was printed for a run cut short"
	[ "$(tail -c 1 "$csv" | od -An -c | tr -d ' ')" = '\n' ] || fail "SIG$sig: the CSV does not end with a newline"
	awk -F, 'NR == 1 { n = NF; next }
	         NF != n { print "row " NR " has " NF " columns, the header " n; exit 1 }
	         $1 != NR - 1 { print "row " NR " is step " $1; exit 1 }
	         END { if (NR < 100) { print NR " rows"; exit 1 } }' "$csv" || fail "SIG$sig: $csv is not whole"
	echo "SIG$sig: $(($(wc -l <"$csv") - 1)) whole rows"
done
