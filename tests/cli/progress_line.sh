# Long runs show a live progress line on a terminal (simulated time, percent, rate
# against real time), redrawn in place with carriage returns and erased at the end; not
# when stderr is a pipe or a file, and not with --quiet.  The terminal is a
# pseudo-terminal from util-linux's script.
. "$(dirname "$0")/lib.sh"

command -v script >/dev/null 2>&1 || { echo "SKIP: no script(1) for a pseudo-terminal"; exit 0; }

# stdout to a file, stderr on the terminal
script -qec "'$tela' run hanging --seconds 0.5 >'$out/run.out'" /dev/null >"$out/tty.txt" 2>&1 </dev/null
rc=$?
[ "$rc" -eq 0 ] || { cat "$out/tty.txt"; fail "tela run under script exited with $rc"; }
od -c "$out/tty.txt" | head -20
tr '\r' '\n' <"$out/tty.txt" >"$out/tty.lines"
grep -q '^t [0-9.]*/0\.50 s  *[0-9]*%  [0-9.]*x real time *$' "$out/tty.lines" || fail "no progress line on the terminal"
# drawn over itself, and erased at the end: nothing else on the terminal, and after the
# last return only blanks
[ "$(head -c 1 "$out/tty.txt" | od -An -c | tr -d ' ')" = '\r' ] || fail "the line does not start with a return"
grep -v '^ *$' "$out/tty.lines" | grep -v '^t [0-9.]*/0\.50 s  *[0-9]*%  [0-9.]*x real time *$' &&
	fail "something besides progress lines on the terminal"
last=$(tail -c 64 "$out/tty.txt" | tr '\r' '\n' | tail -n 1 | tr -d ' \n')
[ -z "$last" ] || fail "the progress line was not erased at the end (left '$last')"
grep -q '^scene hanging: ' "$out/run.out" || fail "no summary on stdout"

# a progress line never reaches a file or a pipe
"$tela" run hanging --seconds 0.5 >"$out/plain.out" 2>"$out/plain.err" || fail "tela run exited with $?"
[ ! -s "$out/plain.err" ] || { cat "$out/plain.err"; fail "stderr not a terminal, yet something was written"; }
"$tela" run hanging --seconds 0.5 2>&1 | grep -q 'real time' && fail "a progress line into a pipe"

# --quiet: nothing on the terminal
script -qec "'$tela' run hanging --seconds 0.5 --quiet" /dev/null >"$out/quiet.txt" 2>&1 </dev/null ||
	fail "tela run --quiet under script exited with $?"
[ ! -s "$out/quiet.txt" ] || { od -c "$out/quiet.txt" | head; fail "--quiet wrote to the terminal"; }

# an event during the run is printed whole, on a line of its own: the progress line,
# drawn from the first step on, is erased first (explicit Euler at 50 ms blows up)
cp "$src/tests/data/scenes/blow-up.ini" "$out/blow.ini" || fail "no blow-up scene"
script -qec "'$tela' run '$out/blow.ini' >/dev/null" /dev/null >"$out/event.txt" 2>&1 </dev/null
tr '\r' '\n' <"$out/event.txt" >"$out/event.lines"
grep -q '^t [0-9.]*/1\.00 s  *[0-9]*%  [0-9.]*x real time *$' "$out/event.lines" || fail "no progress line before the event"
grep -q "^tela run: .*blew up with euler: .*(at t = [0-9.]* s)$" "$out/event.lines" ||
	{ od -c "$out/event.txt" | head -30; fail "the event is not on a line of its own"; }
# the blanks that erased the progress line come right before the event
grep -q "^ *$" "$out/event.lines" || fail "the progress line was not erased before the event"

# the headless demo and the benches have the line too
script -qec "'$tela' hanging --headless --seconds 0.2 --out '$out/demo.png' >/dev/null" /dev/null \
	>"$out/demo.txt" 2>&1 </dev/null || fail "the headless demo exited with $?"
tr '\r' '\n' <"$out/demo.txt" | grep -q '^t [0-9.]*/0\.20 s  *[0-9]*%  [0-9.]*x real time *$' ||
	fail "no progress line from the headless demo"
script -qec "'$tela' bench collisions --case pile --seconds 0.05 >/dev/null" /dev/null \
	>"$out/bench.txt" 2>&1 </dev/null || fail "tela bench collisions exited with $?"
tr '\r' '\n' <"$out/bench.txt" | grep -q '^pile .*t [0-9.]*/0\.05 s  *[0-9]*%  [0-9.]*x real time *$' ||
	{ od -c "$out/bench.txt" | head; fail "no progress line from the bench"; }
exit 0
