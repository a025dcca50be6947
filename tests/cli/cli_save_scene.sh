# `tela run SCENE --save-scene FILE`: the scene, with the command line's world options,
# becomes a scene file that runs to the same state hash; saved again it is the same text;
# an unwritable path, or an option a scene file cannot hold, exits 3 and writes nothing.
# labels: unit;cli
. "$(dirname "$0")/lib.sh"

hash_of() {
	"$tela" run "$@" | grep '^state hash ' || fail "tela run $* gave no state hash"
}

opts="--integrator implicit --gravity 0.5,-9,0.25 --strain-limit 0.05 --air-damping 0.2 --dt 0.0007"
"$tela" run twist $opts --save-scene "$out/twist.ini" >"$out/save.txt" || fail "--save-scene exited with $?"
grep -q "^scene: $out/twist.ini" "$out/save.txt" || fail "no 'scene:' line: $(cat "$out/save.txt")"
grep -q '^integrator = implicit$' "$out/twist.ini" || fail "the integrator is not in the file"
a=$(hash_of twist $opts --steps 300)
b=$(hash_of "$out/twist.ini" --steps 300)
echo "options: $a; saved file: $b"
[ "$a" = "$b" ] || fail "the saved scene runs differently"
# and the options mattered
c=$(hash_of twist --steps 300)
[ "$a" != "$c" ] || fail "the options changed nothing"

"$tela" run "$out/twist.ini" --save-scene "$out/again.ini" --quiet || fail "saving the saved scene exited with $?"
cmp "$out/twist.ini" "$out/again.ini" || fail "saving the saved scene changed the text"

# a seed folder becomes an editable scene file
"$tela" run "$src/tests/data/seed/environment" --save-scene "$out/seed.ini" --quiet || fail "seed folder: exit $?"
a=$(hash_of "$src/tests/data/seed/environment" --seconds 1)
b=$(hash_of "$out/seed.ini" --seconds 1)
echo "seed folder: $a; saved file: $b"
[ "$a" = "$b" ] || fail "the saved seed scene runs differently"

"$tela" run hanging --save-scene "$out/no-such-folder/x.ini" 2>"$out/err.txt"
rc=$?
[ $rc -eq 3 ] || fail "an unwritable path exited with $rc, not 3"
grep -q "no-such-folder/x.ini" "$out/err.txt" || fail "the message does not name the path: $(cat "$out/err.txt")"
[ ! -e "$out/no-such-folder" ] || fail "something was written"
# an option beyond what a scene file takes: exit 3 with the reader's message, no file
"$tela" run hanging --air-damping 5000 --save-scene "$out/damped.ini" 2>"$out/err.txt"
rc=$?
[ $rc -eq 3 ] || fail "an unreadable result exited with $rc, not 3"
grep -q "air_damping: '5000'" "$out/err.txt" || fail "the message does not name the value: $(cat "$out/err.txt")"
[ ! -e "$out/damped.ini" ] || fail "a file that does not read back was written"
exit 0
