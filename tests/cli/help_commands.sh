# Every command prints its own help on stdout with exit 0, for --help and -h, wherever
# they stand; each help names every option its command's parser accepts (read from the
# parser's source, so a new option without help fails here); `tela --help` keeps the
# overview and the exit codes; a usage error points at the command's own help.
# labels: cli;unit
. "$(dirname "$0")/lib.sh"

# check_help NAME EXPECT ARGS...: `tela ARGS` exits 0, prints EXPECT (a fixed string) on
# stdout and nothing on stderr; the text is left in $out/NAME.txt
check_help() {
	name=$1
	expect=$2
	shift 2
	"$tela" "$@" >"$out/$name.txt" 2>"$out/$name.err"
	rc=$?
	[ "$rc" -eq 0 ] || fail "tela $* exited with $rc"
	[ -s "$out/$name.err" ] && fail "tela $* wrote to stderr: $(cat "$out/$name.err")"
	grep -F -q -e "$expect" "$out/$name.txt" || fail "tela $* does not print '$expect'"
}

# options SOURCE: the option names a parser compares against ("--name" as a whole string)
options() {
	grep -o '"--[a-z][a-z-]*"' "$src/app/$1" | tr -d '"' | sort -u
}

# every option of SOURCE appears in the help text FILE
covers() {
	file=$1
	source=$2
	[ "$(options "$source" | wc -l)" -ge 3 ] || fail "found no options in app/$source"
	for opt in $(options "$source"); do
		grep -q -e "$opt\b" "$out/$file.txt" || fail "$file: the help does not name $opt (accepted by app/$source)"
	done
}

for flag in --help -h; do
	check_help "run$flag" "usage: tela run SCENE" run $flag
	check_help "demo$flag" "usage: tela [demo] [SCENE]" demo $flag
	check_help "scenes$flag" "usage: tela scenes" scenes $flag
	check_help "traj$flag" "usage: tela traj OUT" traj $flag
	check_help "ccd$flag" "usage: tela ccd DIR" ccd $flag
	check_help "mesh$flag" "tela mesh info FILE" mesh $flag
	check_help "bench$flag" "tela bench latency" bench $flag
done
# after other arguments, and for the demo wherever its options begin
check_help run-late "usage: tela run SCENE" run hanging --seconds 1 --help
check_help demo-scene "usage: tela [demo] [SCENE]" hanging --help
check_help demo-xr "usage: tela [demo] [SCENE]" --xr -h
check_help help-run "usage: tela run SCENE" help run
check_help help-demo "usage: tela [demo] [SCENE]" help demo

# one subcommand's help is that subcommand's alone
for sub in grid move info; do
	check_help "mesh-$sub" "tela mesh $sub" mesh $sub --help
	[ "$(grep -c '^  tela mesh ' "$out/mesh-$sub.txt")" -eq 1 ] || fail "tela mesh $sub --help shows other subcommands"
done
for b in integrators collisions gpu latency; do
	check_help "bench-$b" "tela bench $b" bench $b --help
	[ "$(grep -c '^  tela bench ' "$out/bench-$b.txt")" -eq 1 ] || fail "tela bench $b --help shows other benchmarks"
done

# the options each parser accepts are in its command's help
covers run--help cmd_run.c
covers demo--help cmd_demo.c
covers traj--help cmd_traj.c
covers mesh--help cmd_mesh.c
covers bench--help cmd_bench.c
covers bench--help bench_gpu.c

# the overview: every command, every integrator, the exit codes
check_help overview "exit codes:" --help
for word in run scenes bench ccd mesh traj --xr --version euler symplectic midpoint rk4 verlet implicit kang mra; do
	grep -q -w -e "$word" "$out/overview.txt" || fail "tela --help does not mention $word"
done
for code in 0 1 2 3 4 5; do
	grep -q "^  $code  " "$out/overview.txt" || fail "tela --help lists no exit code $code"
done

# a usage error still exits 2, on stderr, and points at the command's own help
"$tela" run hanging --no-such-option >"$out/bad.txt" 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "an unknown run option exited with $rc, not 2"
grep -F -q "(see 'tela run --help')" "$out/bad.txt" || fail "the usage error does not point at tela run --help: $(cat "$out/bad.txt")"
"$tela" help no-such-command >"$out/bad-help.txt" 2>&1
rc=$?
[ "$rc" -eq 2 ] || fail "tela help no-such-command exited with $rc, not 2"
exit 0
