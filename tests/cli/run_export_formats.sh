# labels: unit;cli
# tela run --export DIR --format stl|obj|ply writes the frames --export-stl writes, in the
# chosen format: frames 0, 50 and 100, each the 20 x 20 cloth's 400 vertices and 722
# triangles at the same positions (the same bounds to the bit in every format).
. "$(dirname "$0")/lib.sh"

for f in stl obj ply
do
	"$tela" run hanging --steps 100 --every 50 --quiet --export "$out/$f" --format $f || fail "--format $f"
	files=$(cd "$out/$f" && ls | tr '\n' ' ')
	[ "$files" = "frame000000_cloth.$f frame000050_cloth.$f frame000100_cloth.$f " ] || fail "$f files: $files"
	for step in 000000 000100
	do
		"$tela" mesh info "$out/$f/frame${step}_cloth.$f" >"$out/$f-$step.txt" || fail "info $f $step"
		grep -qx 'vertices 400' "$out/$f-$step.txt" && grep -qx 'triangles 722' "$out/$f-$step.txt" \
		  || fail "$f $step counts"
		grep '^bounds ' "$out/$f-$step.txt" >"$out/$f-$step.bounds"
	done
done
"$tela" run hanging --steps 100 --every 50 --quiet --export-stl "$out/old" || fail "--export-stl"
cmp "$out/old/frame000100_cloth.stl" "$out/stl/frame000100_cloth.stl" || fail "--export --format stl differs from --export-stl"
for f in obj ply
do
	cmp "$out/stl-000100.bounds" "$out/$f-000100.bounds" || fail "$f bounds differ from STL's"
done
cmp -s "$out/obj-000000.bounds" "$out/obj-000100.bounds" && fail "the cloth did not move"
head -c 4 "$out/ply/frame000000_cloth.ply" | grep -q '^ply' || fail "not PLY"
# every frame is written beside its name and renamed into place: nothing half written stays
[ -z "$(find "$out" -name '*.part')" ] || fail "files written beside their names were left: $(find "$out" -name '*.part')"

# Bad combinations exit 2
"$tela" run hanging --steps 1 --format obj 2>"$out/e.txt"
[ $? -eq 2 ] && grep -qF -- "--format goes with --export DIR" "$out/e.txt" || fail "--format alone"
"$tela" run hanging --steps 1 --export-stl "$out/x" --format obj 2>"$out/e.txt"
[ $? -eq 2 ] && grep -qF -- "--format goes with --export DIR" "$out/e.txt" || fail "--export-stl --format"
"$tela" run hanging --steps 1 --export "$out/x" --format off 2>"$out/e.txt"
[ $? -eq 2 ] && grep -qF -- "--format: 'off' is not stl, obj or ply" "$out/e.txt" || fail "--format off"
"$tela" run hanging --steps 1 --export "$out/x" --export-stl "$out/y" 2>"$out/e.txt"
[ $? -eq 2 ] && grep -qF -- "give --export or --export-stl once" "$out/e.txt" || fail "both"
exit 0
