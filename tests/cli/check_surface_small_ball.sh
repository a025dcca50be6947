# labels: cli;collision;validation
# --check measures the cloth's triangles against obstacles, not only its vertices.  A
# 5 x 5 cloth (1 m) laid 3 cm over the centre of a 5 cm ball, off its vertices: with
# collisions off, one step leaves the ball through the two triangles of the quad above it
# while no vertex is inside, and the check must fail on the triangles alone.  Dropped
# from above with collisions on, the run must pass, with every triangle's clearance in
# the stats at least -0.01 mm.
. "$(dirname "$0")/lib.sh"
cat >"$out/ball.ini" <<'INI'
[scene]
seconds = 1.5
[world]
dt = 0.001
[material soft]
structural = 100
shear = 50
bend = 2
friction = 0.4
[plane floor]
[sphere ball]
position = 0.125 0.17 -0.085
radius = 0.05
[grid cloth]
material = soft
resolution = 5 5
size = 1 1
center = 0 0.2 0
INI
"$tela" run "$out/ball.ini" --steps 1 --no-collisions --check --stats "$out/through.csv" \
	>"$out/through.txt" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "a ball through the triangles: exit $rc, not 1"
grep -q "0 vertices inside obstacles, 2 triangles inside" "$out/through.txt" ||
	fail "the message does not name 0 vertices and 2 triangles: $(cat "$out/through.txt")"
head -1 "$out/through.csv" | grep -q ",intersections,vertices_inside,triangles_inside,min_clearance$" ||
	fail "no triangles_inside and min_clearance columns: $(head -1 "$out/through.csv")"
# the triangles are 3 cm (less a step's fall of 5 micrometres) from the centre of a 5 cm
# ball, so their clearance is about 0.03 - 0.05 - 0.0015 m
awk -F, 'NR == 2 { c = $NF + 0; if (c > -0.0214 || c < -0.0216) exit 1 }' "$out/through.csv" ||
	fail "min_clearance is not -0.0215 m: $(tail -1 "$out/through.csv")"

# the same ball, the cloth dropped from 0.4 m
sed 's/^center = 0 0.2 0$/center = 0 0.4 0/; s/^position = 0.125 0.17 -0.085$/position = 0.1 0.05 -0.08/' \
	"$out/ball.ini" >"$out/drop.ini"
"$tela" run "$out/drop.ini" --check --stats "$out/drop.csv" >"$out/drop.txt" 2>&1 ||
	fail "the dropped cloth fails --check: $(cat "$out/drop.txt")"
awk -F, 'NR > 1 { n++; if ($(NF-1) != 0 || $NF + 0 < -0.00001) bad++ } END { exit !(n == 1500 && bad == 0) }' \
	"$out/drop.csv" || fail "a step with a triangle inside, or not 1500 rows"
# and the cloth did come down onto the ball: a step with its clearance under a millimetre
awk -F, 'NR > 1 && $NF + 0 < 0.001 { hit = 1 } END { exit !hit }' "$out/drop.csv" ||
	fail "the cloth never reached the ball"
