# labels: unit;cli
# tela mesh with OBJ and PLY: the format follows the extension (or --format), the
# counts and bounds are the STL grid's, and conversions keep every vertex bit for bit:
# OBJ -> PLY -> OBJ writes the same bytes, STL -> OBJ -> STL reads as the same mesh.
. "$(dirname "$0")/lib.sh"

# A 2 x 1 m grid of 4 x 2 cells centred at (1, -1, 0.5): 15 vertices, 16 triangles, 12
# border edges, every value exact in binary floating point; OBJ and PLY list each vertex
# once, so nothing is welded.
"$tela" mesh grid "$out/g.obj" --size 2 1 --divisions 4 2 --center 1 -1 0.5 --name sheet || fail "grid obj"
[ "$(sed -n 2p "$out/g.obj")" = "o sheet" ] || fail "no 'o sheet' line"
[ "$(grep -c '^v ' "$out/g.obj")" -eq 15 ] && [ "$(grep -c '^f ' "$out/g.obj")" -eq 16 ] || fail "obj counts"
"$tela" mesh info "$out/g.obj" >"$out/obj.txt" || fail "info obj"
printf '%s\n' 'format obj' 'facets 16' 'vertices 15' 'triangles 16' 'welded 0' 'degenerate 0' 'unused 0' \
  'bounds 0 -1.5 0.5 2 -0.5 0.5' 'boundary_edges 12' 'nonmanifold_edges 0' 'misoriented_edges 0' \
  'closed no' >"$out/expected.txt"
diff "$out/expected.txt" "$out/obj.txt" || fail "mesh info of the OBJ grid differs"

# PLY: binary little-endian, a header then 12 bytes per vertex and 13 per triangle
"$tela" mesh grid "$out/g.ply" --size 2 1 --divisions 4 2 --center 1 -1 0.5 || fail "grid ply"
header=$(grep -a -b -m 1 '^end_header$' "$out/g.ply" | cut -d: -f1)
size=$(wc -c <"$out/g.ply")
[ "$size" -eq $((header + 11 + 15 * 12 + 16 * 13)) ] || fail "PLY size $size, header end at $header"
"$tela" mesh info "$out/g.ply" >"$out/ply.txt" || fail "info ply"
[ "$(head -n 1 "$out/ply.txt")" = "format ply binary_little_endian" ] || fail "not binary little-endian PLY"
sed 1d "$out/obj.txt" >"$out/obj.rest"
sed 1d "$out/ply.txt" >"$out/ply.rest"
diff "$out/obj.rest" "$out/ply.rest" || fail "OBJ and PLY grids differ"

# A rotated, scaled grid has coordinates that are not round: OBJ -> PLY -> OBJ is exact.
"$tela" mesh move "$out/g.ply" "$out/r.obj" --rotate 10 20 30 --scale 1.1 --translate 0.01 0.02 0.03 || fail "move"
"$tela" mesh move "$out/r.obj" "$out/r.ply" || fail "obj to ply"
"$tela" mesh move "$out/r.ply" "$out/r2.obj" || fail "ply to obj"
cmp "$out/r.obj" "$out/r2.obj" || fail "OBJ -> PLY -> OBJ changed the file"

# STL -> OBJ -> STL: the same mesh (the cube's 36 corners weld to the same 8 vertices)
"$tela" mesh move "$src/tests/data/stl/cube" "$out/cube.obj" || fail "stl to obj"
"$tela" mesh move "$out/cube.obj" "$out/cube.stl" || fail "obj to stl"
"$tela" mesh info "$src/tests/data/stl/cube" >"$out/cube0.txt" || fail "info cube"
"$tela" mesh info "$out/cube.stl" >"$out/cube1.txt" || fail "info cube.stl"
diff "$out/cube0.txt" "$out/cube1.txt" || fail "the cube changed on its way through OBJ"
grep -qx 'volume 1' "$out/cube1.txt" || fail "cube volume"

# --format overrides the extension, for writing and for reading
"$tela" mesh grid "$out/x.dat" --size 1 1 --divisions 1 1 --format ply || fail "grid --format ply"
"$tela" mesh info "$out/x.dat" --format ply >"$out/x.txt" || fail "info --format ply"
grep -qx 'format ply binary_little_endian' "$out/x.txt" && grep -qx 'triangles 2' "$out/x.txt" || fail "forced PLY"
"$tela" mesh info "$out/x.dat" >/dev/null 2>"$out/x.err"
[ $? -eq 3 ] || fail "a PLY file read as STL (no extension) must exit 3"
grep -qF "$out/x.dat: not STL" "$out/x.err" || fail "STL message for x.dat"

# Bad command lines exit 2
"$tela" mesh grid "$out/b.obj" --size 1 1 --divisions 1 1 --binary 2>"$out/e.txt"
[ $? -eq 2 ] || fail "--binary with OBJ must exit 2"
grep -qF -- "--binary: OBJ is text only" "$out/e.txt" || fail "--binary message"
[ ! -e "$out/b.obj" ] || fail "b.obj written despite the error"
"$tela" mesh info "$out/g.obj" --format off 2>"$out/e.txt"
[ $? -eq 2 ] || fail "--format off must exit 2"
grep -qF -- "--format: 'off' is not stl, obj or ply" "$out/e.txt" || fail "--format message"

# Bad files exit 3 naming the line (text) or the byte (binary PLY)
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n' >"$out/bad.obj"
"$tela" mesh info "$out/bad.obj" 2>"$out/e.txt"
[ $? -eq 3 ] || fail "a bad OBJ must exit 3"
grep -qF "tela mesh: $out/bad.obj:4: f: vertex index 4 is out of range" "$out/e.txt" || fail "OBJ message"
head -c $((header + 11 + 15 * 12 + 5)) "$out/g.ply" >"$out/cut.ply"
"$tela" mesh info "$out/cut.ply" 2>"$out/e.txt"
[ $? -eq 3 ] || fail "a cut PLY must exit 3"
grep -qF "tela mesh: $out/cut.ply:8: element face: 16 items: the data up to here needs at least 196 bytes" \
  "$out/e.txt" || { cat "$out/e.txt"; fail "PLY message"; }

# Statements tela does not read are skipped with a warning naming the first
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nl 1 2\nf 1 2 3\ncurv 0 1 1 2\n' >"$out/lines.obj"
"$tela" mesh info "$out/lines.obj" >"$out/l.txt" 2>"$out/l.err" || fail "an OBJ with 'l' lines is read"
grep -qxF "tela mesh: warning: $out/lines.obj:4: skipped 2 statements tela does not read (the first: 'l')" \
  "$out/l.err" || { cat "$out/l.err"; fail "warning"; }
grep -qx 'triangles 1' "$out/l.txt" || fail "lines.obj triangles"
