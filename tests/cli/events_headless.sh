# Headless runs say on stderr what goes wrong as it happens, with the simulated time:
# a blow-up (tela run stops at it; the headless demo recovers and counts the repeats),
# the GPU integrator falling back to the CPU, with why, and a recording that stopped.
# labels: cli;render
. "$(dirname "$0")/lib.sh"

# explicit Euler at 50 ms: far beyond its limit for these springs
cp "$src/tests/data/scenes/blow-up.ini" "$out/blow.ini" || fail "no blow-up scene"

"$tela" run "$out/blow.ini" --stats "$out/blow.csv" >"$out/run.out" 2>"$out/run.err"
rc=$?
cat "$out/run.err"
[ "$rc" -eq 1 ] || fail "tela run on a blow-up exited with $rc, not 1"
line=$(grep "blew up with euler" "$out/run.err") || fail "no blow-up event on stderr"
[ "$(grep -c 'blew up' "$out/run.err")" -eq 1 ] || fail "the blow-up said more than once"
# its time is the failed step's: step N ends at N x 50 ms
step=$(echo "$line" | sed -n 's/.*: step \([0-9]*\) blew up.*/\1/p')
t=$(echo "$line" | sed -n 's/.*(at t = \([0-9.]*\) s)$/\1/p')
[ -n "$step" ] && [ -n "$t" ] || fail "no step or time in: $line"
want=$(awk -v n="$step" 'BEGIN { printf "%.3f", n * 0.05 }')
[ "$t" = "$want" ] || fail "blow-up at step $step said t = $t, not $want"
# the stats stop at the last good step, before the one that blew up
rows=$(($(wc -l <"$out/blow.csv") - 1))
[ "$rows" -eq $((step - 1)) ] || fail "$rows stats rows before the blow-up at step $step"

# the headless demo recovers from every blow-up: one line as it happens, the repeats
# counted (not one line each), all before the summary
"$tela" "$out/blow.ini" --headless --seconds 1 --out "$out/blow.png" >"$out/demo.out" 2>"$out/demo.err"
rc=$?
cat "$out/demo.err"
[ "$rc" -eq 0 ] || fail "the headless demo exited with $rc"
n=$(grep -c "^tela: blow-up in 'cloth' vertex [0-9]* (.*); recovered; .* (at t = [0-9.]* s" "$out/demo.err")
[ "$n" -ge 1 ] && [ "$n" -le 3 ] || fail "$n blow-up lines (one, and the count of repeats, expected)"
grep -q "recovered; .* (at t = [0-9.]* s; [0-9]* times)" "$out/demo.err" || fail "the repeats are not counted"
grep -q "^picture: " "$out/demo.out" || fail "no summary after the events"

# --backend gpu with mra: the GPU has no such integrator, and says so
"$tela" run hanging --steps 5 --integrator mra --backend gpu >"$out/gpu.out" 2>"$out/gpu.err"
rc=$?
cat "$out/gpu.err"
[ "$rc" -eq 0 ] || fail "tela run --backend gpu with mra exited with $rc"
grep -q "^tela run: --backend gpu: the GPU has no mra integrator; the CPU runs instead (at t = 0.000 s)$" \
	"$out/gpu.err" || fail "no fallback event with its reason and time"
# and the demo's GPU switch, the simulation thread's: the CPU steps, and why
sed 's/integrator = euler/integrator = mra/; s/dt = 0.05/dt = 0.001/' "$out/blow.ini" >"$out/mra.ini"
"$tela" "$out/mra.ini" --headless --backend gpu --seconds 0.05 --out "$out/mra.png" >"$out/mra.out" 2>"$out/mra.err"
rc=$?
cat "$out/mra.err"
[ "$rc" -eq 0 ] || fail "the headless demo with --backend gpu exited with $rc"
grep -q "^tela: the GPU \(cannot step with mra\|is not available (.*)\); the CPU steps (at t = [0-9.]* s)$" \
	"$out/mra.err" || fail "no fallback event from the demo"

# a recording onto a full disk stops once its buffer is written; the run goes on
if [ -w /dev/full ]; then
	for cmd in run demo; do
		if [ $cmd = run ]; then
			"$tela" run hanging --device synthetic:grab --record /dev/full --seconds 2 >"$out/rec.out" 2>"$out/rec.err"
		else
			"$tela" hanging --headless --device synthetic:grab --record /dev/full --seconds 2 \
				--out "$out/rec.png" >"$out/rec.out" 2>"$out/rec.err"
		fi
		rc=$?
		cat "$out/rec.err"
		[ "$rc" -eq 0 ] || fail "$cmd: exit $rc after the recording stopped"
		[ "$(grep -c 'recording to /dev/full stopped' "$out/rec.err")" -eq 1 ] || fail "$cmd: not said once"
		grep -q ": --record: recording to /dev/full stopped: .* (at t = [0-9.]* s)$" "$out/rec.err" ||
			fail "$cmd: no event for the recording"
	done
fi
exit 0
