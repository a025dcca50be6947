# A runtime that dies mid-session (its service killed) answers XR_ERROR_INSTANCE_LOST with
# no event before it, from whichever call comes next.  The test runtime (tests/xr.cmake)
# loses the instance at a chosen call of the frame loop (its script's instance_lost); for
# each, `tela --xr` must say "the runtime lost the session", name no failed call, exit 5,
# and make no call on the lost instance but xrDestroyInstance (the runtime logs any other
# as an error), all under Debian's core validation layer, which must stay silent.
# labels: xr;render
. "$(dirname "$0")/lib.sh"

json="$(dirname "$tela")/../tests/xr_test_runtime.json"
[ -f "$json" ] || fail "no OpenXR test runtime ($json): tests/xr.cmake builds it"
command -v xvfb-run >/dev/null 2>&1 || fail "no xvfb-run (build.sh installs the xvfb package)"
data="$src/tests/data"

# CALL FRAMES SCRIPT SCENE: the frame loop's calls; each is lost once FRAMES frames have
# been waited for (the session is focused and rendering by then).  xrApplyHapticFeedback
# comes only while the right controller holds the corner (grab.script), so the first one
# is lost.
cat >"$out/cases" <<EOF
xrWaitFrame 20 look.script hanging
xrBeginFrame 20 look.script hanging
xrSyncActions 20 look.script hanging
xrLocateViews 20 look.script hanging
xrAcquireSwapchainImage 20 look.script hanging
xrEndFrame 20 look.script hanging
xrPollEvent 20 look.script hanging
xrApplyHapticFeedback 1 grab.script $data/scenes/stylus-corner.ini
EOF

# one X server for every run
xvfb-run -a -s "-screen 0 1280x800x24" sh -c '
	tela=$1 out=$2 json=$3 data=$4
	while read call frames script scene; do
		dir=$out/$call
		mkdir -p "$dir" || exit 1
		{ cat "$data/xr/$script"; echo "instance_lost $frames $call"; } >"$dir/script"
		XR_RUNTIME_JSON="$json" XR_ENABLE_API_LAYERS=XR_APILAYER_LUNARG_core_validation \
		XR_CORE_VALIDATION_EXPORT_TYPE=text XR_CORE_VALIDATION_FILE_NAME="$dir/validation.txt" \
		TELA_XR_TEST_SCRIPT="$dir/script" TELA_XR_TEST_LOG="$dir/log.txt" \
			timeout -s KILL 60 "$tela" --xr --size 640x400 "$scene" >"$dir/out.txt" 2>&1
		echo $? >"$dir/rc"
	done <"$out/cases"' sh "$tela" "$out" "$json" "$data" || fail "xvfb-run failed"

while read call frames script scene; do
	dir=$out/$call
	echo "== $call (after $frames frames, $script)"
	cat "$dir/out.txt"
	rc=$(cat "$dir/rc")
	[ "$rc" -eq 5 ] || fail "$call: exit $rc, expected 5"
	grep -q '^tela --xr: the runtime lost the session' "$dir/out.txt" || fail "$call: not the loss's message"
	grep -q ' failed: ' "$dir/out.txt" && fail "$call: a loss reported as a failed call"
	grep -q "^instance lost at $call after [0-9]* frames\$" "$dir/log.txt" || fail "$call: the runtime did not lose the instance there"
	grep '^error' "$dir/log.txt" && fail "$call: a call on the lost instance (or a bad script)"
	[ "$(tail -n 1 "$dir/log.txt")" = "destroy instance" ] || fail "$call: the instance was not destroyed last"
	# no event came, so the session never left FOCUSED
	grep -q '^xr: session states: IDLE READY SYNCHRONIZED VISIBLE FOCUSED$' "$dir/out.txt" ||
		fail "$call: the session states"
	grep -q '^Core Validation output type: text' "$dir/out.txt" || fail "$call: the validation layer did not run"
	[ -s "$dir/validation.txt" ] && { cat "$dir/validation.txt"; fail "$call: the validation layer reported"; }
done <"$out/cases"
exit 0
