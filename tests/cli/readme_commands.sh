# Runs every command of README.md's "Using it" block, read from the README itself so that
# the two cannot drift, as a new user would from the top of a fresh clone: no display
# (the demo falls back to its headless run), in a scratch copy of the tree made of links
# (outputs land in the scratch folder), with ../shared next to it when the real one is.
# Benchmarks get short durations appended; what needs hardware or a runtime (a Polhemus,
# an OpenXR headset, a window for the mouse) is run for its message and exit code without
# one, and the test that covers it with an emulation is named below.
# labels: cli;readme
. "$(dirname "$0")/lib.sh"
unset DISPLAY WAYLAND_DISPLAY

readme=$src/README.md
sed -n '/^## Using it$/,/^## /p' "$readme" | sed -n 's/^    tela\( \|$\)/tela\1/p' |
	sed 's/  *# .*$//; s/ *$//' >"$out/commands.txt"
count=$(wc -l <"$out/commands.txt")
[ "$count" -ge 20 ] || fail "read only $count commands from README.md's 'Using it' block"

tree=$out/clone
mkdir -p "$tree" || exit 1
for f in "$src"/* "$src"/.[!.]*; do
	[ -e "$f" ] && ln -s "$f" "$tree/"
done
shared_here=no
if [ -d "$src/../shared/data/ccd-queries" ]; then
	ln -s "$(cd "$src/../shared" && pwd)" "$out/shared"
	shared_here=yes
fi
cd "$tree" || exit 1

# value_of OPTION ARGS...: the word after OPTION in ARGS, or nothing
value_of() {
	opt=$1
	shift
	while [ $# -gt 1 ]; do
		[ "$1" = "$opt" ] && { echo "$2"; return; }
		shift
	done
}

# run_expect CODE TEXT ARGS...: tela ARGS exits with CODE and prints TEXT (fixed string)
run_expect() {
	code=$1
	text=$2
	shift 2
	timeout -s KILL 300 "$tela" "$@" >log.txt 2>&1
	rc=$?
	[ "$rc" -eq "$code" ] || { cat log.txt; fail "tela $* exited with $rc, expected $code"; }
	[ -z "$text" ] || grep -F -q -e "$text" log.txt || { cat log.txt; fail "tela $* did not print '$text'"; }
}

n=0
while IFS= read -r line; do
	n=$((n + 1))
	# shellcheck disable=SC2086 # the README's commands are plain words
	set -- $line
	shift # "tela"
	echo "[$n/$count] $line"
	case " $* " in
	*" --xr "*)
		# covered with the test runtime under Xvfb by xr_session_grab and, for a stylus with
		# the stage calibration of scenes/examples/stage.cal, xr_stylus_in_stage
		timeout -s KILL 60 env XR_RUNTIME_JSON=/nonexistent/runtime.json "$tela" "$@" >log.txt 2>&1
		rc=$?
		case $rc in
		4 | 5) grep -q -e "--xr" -e "OpenGL" log.txt || { cat log.txt; fail "no message for exit $rc"; } ;;
		*) cat log.txt; fail "tela $* without a runtime exited with $rc, expected 4 or 5" ;;
		esac
		;;
	*" --device polhemus "*)
		# no tracker here; test_polhemus_usb drives the same path against an emulated PATRIOT
		run_expect 3 "--device polhemus: polhemus: " "$@"
		;;
	*" --record "*)
		case " $* " in *" --device "*) fail "no rule for a README line recording a device: $line" ;; esac
		# the mouse needs a window; test_demo's test_mouse_recording_replays records it in one
		run_expect 2 "a headless run has none" "$@"
		;;
	" ccd "*)
		if [ "$shared_here" = yes ]; then
			run_expect 0 "false_negatives=0" "$@"
		else
			echo "NOTE: $src/../shared/data/ccd-queries is absent (the shared data folder next to the"
			echo "      source tree): the ccd line was NOT run on its data, only its message for a"
			echo "      missing folder checked; ccd_benchmark_no_false_negatives fails the same way"
			run_expect 3 "../shared/data/ccd-queries: No such file or directory" "$@"
		fi
		;;
	" bench integrators "*) run_expect 0 "kang" "$@" --seconds 0.01 --sizes 8,16 ;;
	" bench collisions "*) run_expect 0 "state hash" "$@" --seconds 0.05 ;;
	" bench latency "*) run_expect 0 "lockstep" "$@" --seconds 0.5 ;;
	# its stability and elongation parts take minutes (docs/benchmarks.md has their figures)
	" bench gpu "*) run_expect 0 "" "$@" --sizes 8 --steps 2 --only throughput ;;
	" run "* | " mesh "* | " traj "* | " scenes "* | " --help "* | " --version "* | " run --help "*)
		run_expect 0 "" "$@"
		;;
	*)
		# the demo: headless here, it must say so and leave its picture
		run_expect 0 "picture: " "$@"
		pic=$(value_of --out "$@")
		[ -n "$pic" ] || pic=$(sed -n 's/^picture: \([^ ]*\) .*/\1/p' log.txt)
		[ -s "$pic" ] || fail "tela $* left no picture '$pic'"
		;;
	esac
	# what the command says it writes is there
	for opt in --stats --csv --screenshot; do
		f=$(value_of $opt "$@")
		[ -z "$f" ] || [ -s "$f" ] || fail "tela $* wrote no $opt file '$f'"
	done
	d=$(value_of --export-stl "$@")
	[ -z "$d" ] || [ -n "$(ls "$d")" ] || fail "tela $* exported nothing into '$d'"
	p=$(value_of --svg "$@")
	[ -z "$p" ] || [ -s "$p-throughput.svg" ] || fail "tela $* wrote no '$p-throughput.svg'"
	case " $* " in
	*" --device replay:"*)
		grep -q "^stylus: vertex [0-9]* grabbed at" log.txt || fail "the replay grabbed nothing: $(cat log.txt)"
		;;
	" traj "*)
		# the README says the example scene's velocity file is this command's output
		cmp -s "$2" "$src/scenes/examples/$2" || fail "tela $* does not write scenes/examples/$2"
		;;
	" mesh grid "*)
		[ -s "$3" ] || fail "tela $* wrote no '$3'"
		;;
	esac
done <"$out/commands.txt"
[ "$n" -eq "$count" ] || fail "ran $n of $count commands"
echo "ran all $count commands of README.md's 'Using it' block"
exit 0
