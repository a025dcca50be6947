# SIGINT and SIGTERM end the windowed demo (under Xvfb) within a second (checked against
# a generous 5 s) with exit 130 and 143: the window's event loop, the simulation thread
# and the device thread all stop, and the stylus's recording is whole (it replays).
. "$(dirname "$0")/lib.sh"

if ! command -v xvfb-run >/dev/null 2>&1; then
	echo "SKIP: no xvfb-run, so no window to stop here (the offscreen paths are signal_run and signal_headless)"
	exit 0
fi

for sig in INT TERM; do
	xvfb-run -a -s "-screen 0 1280x800x24" sh -c '
		tela=$1 out=$2 sig=$3
		. "$4/tests/cli/signal.inc"
		"$tela" hanging --device synthetic:grab --record "$out/$sig.rec" >"$out/$sig.out" 2>"$out/$sig.err" &
		pid=$!
		start_guard $pid
		sleep 4
		signal_and_wait $pid $sig
		echo "$rc $took" >"$out/$sig.result"' sh "$tela" "$out" $sig "$src" || fail "SIG$sig: xvfb-run failed"
	read rc took <"$out/$sig.result"
	echo "SIG$sig: exit $rc after $took s"
	cat "$out/$sig.out" "$out/$sig.err"
	case $sig in INT) want=130 ;; TERM) want=143 ;; esac
	[ "$rc" -eq $want ] || fail "SIG$sig: exit $rc, expected $want"
	awk -v t="$took" 'BEGIN { exit !(t < 5.0) }' || fail "SIG$sig: took $took s to end"
	grep -q "stopped by SIG$sig" "$out/$sig.err" || fail "SIG$sig: no message saying so"
	# the device thread was joined and the source closed: the recording replays to its end
	"$tela" run hanging --device "replay:$out/$sig.rec@0" --steps 10 --quiet >"$out/$sig.replay" 2>&1 ||
		{ cat "$out/$sig.replay"; fail "SIG$sig: the recording does not replay"; }
done
