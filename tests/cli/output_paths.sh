# An output path that cannot be written is refused before the run: exit 3 at once, a
# message naming the option and the path, and no other output file left behind (the
# run's stats are not started, the bench's CSV not created).  Good paths still work,
# a missing --export-stl folder included.
. "$(dirname "$0")/lib.sh"

missing="$out/no-such-folder/x"
touch "$out/a-file"

# refused: exit 3, the path named, nothing run, nothing created
refused() {
	what=$1
	path=$2
	shift 2
	"$@" >"$out/stdout.txt" 2>"$out/stderr.txt"
	rc=$?
	cat "$out/stderr.txt"
	[ "$rc" -eq 3 ] || fail "$what: exit $rc, not 3"
	grep -qF -- "$path" "$out/stderr.txt" || fail "$what: the message does not name $path"
	[ ! -s "$out/stdout.txt" ] || { cat "$out/stdout.txt"; fail "$what: it ran (or printed) before refusing"; }
	[ ! -e "$out/stats.csv" ] || fail "$what: the stats file was created"
	[ ! -e "$out/good.csv" ] || fail "$what: the CSV was created"
}

refused "run --stats in a missing folder" "$missing.csv" \
	"$tela" run hanging --seconds 100 --stats "$missing.csv"
refused "run --screenshot" "$missing.png" \
	"$tela" run hanging --seconds 100 --stats "$out/stats.csv" --screenshot "$missing.png"
refused "run --stats on a folder" "$out" "$tela" run hanging --seconds 100 --stats "$out"
refused "run --export-stl under a file" "$out/a-file/frames" \
	"$tela" run hanging --seconds 100 --stats "$out/stats.csv" --export-stl "$out/a-file/frames"
refused "run --record" "$missing.rec" \
	"$tela" run hanging --seconds 100 --stats "$out/stats.csv" --device synthetic:grab --record "$missing.rec"
refused "demo --out" "$missing.png" "$tela" hanging --headless --seconds 100 --out "$missing.png"
refused "demo --record" "$missing.rec" \
	"$tela" hanging --headless --seconds 100 --device synthetic:grab --record "$missing.rec"
refused "bench --csv" "$missing.csv" "$tela" bench integrators --csv "$missing.csv"
refused "bench --steps" "$missing.csv" \
	"$tela" bench collisions --csv "$out/good.csv" --steps "$missing.csv"
refused "bench gpu --svg" "$missing" "$tela" bench gpu --csv "$out/good.csv" --svg "$missing"

# the message says why
"$tela" run hanging --stats "$missing.csv" 2>"$out/why.txt"
grep -qF "tela run: --stats $missing.csv: the folder $out/no-such-folder does not exist" "$out/why.txt" ||
	{ cat "$out/why.txt"; fail "the message does not say the folder is missing"; }

# writable paths pass, and a new nested --export-stl folder is made
"$tela" run hanging --steps 2 --stats "$out/stats.csv" --export-stl "$out/new/nested/frames" --every 2 \
	--screenshot "$out/shot.png" --quiet || fail "good output paths refused (exit $?)"
[ "$(wc -l <"$out/stats.csv")" -eq 3 ] || fail "the stats file does not hold a header and 2 rows"
ls "$out/new/nested/frames" | grep -q '^frame000002_' || fail "no meshes in the new folder"
[ -s "$out/shot.png" ] || fail "no screenshot"
exit 0
