# SIGINT and SIGTERM end `tela --xr` (under Xvfb, against the OpenXR test runtime that
# tests/xr.cmake builds) within a second (checked against a generous 5 s), with exit 130
# and 143, the session ended the runtime's way (STOPPING, IDLE, EXITING).
# labels: xr
. "$(dirname "$0")/lib.sh"

json="$(dirname "$tela")/../tests/xr_test_runtime.json"
if ! command -v xvfb-run >/dev/null 2>&1 || [ ! -f "$json" ]; then
	echo "SKIP: no xvfb-run or no OpenXR test runtime ($json)"
	exit 0
fi

for sig in INT TERM; do
	XR_RUNTIME_JSON="$json" TELA_XR_TEST_SCRIPT="$src/tests/data/xr/look.script" TELA_XR_TEST_LOG="$out/$sig.log" \
	xvfb-run -a -s "-screen 0 1280x800x24" sh -c '
		tela=$1 out=$2 sig=$3
		. "$4/tests/cli/signal.inc"
		"$tela" --xr --size 640x400 hanging >"$out/$sig.out" 2>&1 &
		pid=$!
		start_guard $pid
		sleep 5
		signal_and_wait $pid $sig
		echo "$rc $took" >"$out/$sig.result"' sh "$tela" "$out" $sig "$src" || fail "SIG$sig: xvfb-run failed"
	read rc took <"$out/$sig.result"
	echo "SIG$sig: exit $rc after $took s"
	cat "$out/$sig.out"
	case $sig in INT) want=130 ;; TERM) want=143 ;; esac
	[ "$rc" -eq $want ] || fail "SIG$sig: exit $rc, expected $want"
	awk -v t="$took" 'BEGIN { exit !(t < 5.0) }' || fail "SIG$sig: took $took s to end"
	grep -q "^xr: session states: .* FOCUSED .*STOPPING IDLE EXITING$" "$out/$sig.out" ||
		fail "SIG$sig: the session did not end the runtime's way"
done
