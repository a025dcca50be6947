# labels: unit;cli
# Scene files name OBJ and PLY meshes as they name STL ones.  The seed's cloth converted to
# OBJ and its table to PLY build the same world as the STL scene file (one state hash after
# 2 s: the same vertices, numbering and triangles); and tests/data/scenes/obj-ply.ini, an
# OBJ cloth over a PLY table, runs checked and leaves the cloth resting on the table top.
. "$(dirname "$0")/lib.sh"
data="$src/tests/data"
bodies="$data/seed/environment/bodies"

"$tela" mesh move "$bodies/dpo_ClothOnTable" "$out/cloth.obj" || fail "cloth to OBJ"
"$tela" mesh move "$bodies/rig_table" "$out/table.ply" || fail "table to PLY"
sed -e "s#\.\./seed/environment/bodies/rig_table\$#$out/table.ply#" \
    -e "s#\.\./seed/environment/bodies/dpo_ClothOnTable\$#$out/cloth.obj#" \
    -e "s#\.\./seed/#$data/seed/#" "$data/scenes/mesh-on-table.ini" >"$out/converted.ini"
grep -qx "file = $out/table.ply" "$out/converted.ini" && grep -qx "file = $out/cloth.obj" "$out/converted.ini" \
  || fail "the converted scene does not name the OBJ and PLY files"
a=$("$tela" run "$data/scenes/mesh-on-table.ini" --seconds 2 | grep '^state hash ') || fail "STL scene"
b=$("$tela" run "$out/converted.ini" --seconds 2 | grep '^state hash ') || fail "OBJ/PLY scene"
echo "STL: $a; OBJ and PLY: $b"
[ -n "$a" ] && [ "$a" = "$b" ] || fail "the OBJ/PLY scene differs from the STL one"

# The cloth starts at y = 1 over a table whose top is at y = 0.8; after 1 s it lies on it
# (within its collision thickness), where a cloth without the table would be 4 m lower.
"$tela" run "$data/scenes/obj-ply.ini" --check --quiet --export "$out/frames" --format obj --every 1000 \
  || fail "obj-ply.ini"
"$tela" mesh info "$out/frames/frame001000_cloth.obj" >"$out/info.txt" || fail "the last frame"
cat "$out/info.txt"
grep -qx 'vertices 36' "$out/info.txt" && grep -qx 'triangles 50' "$out/info.txt" || fail "cloth counts"
awk '$1 == "bounds" { ok = ($3 >= 0.8 && $3 <= 0.81 && $6 >= 0.8 && $6 <= 0.81) } END { exit !ok }' \
  "$out/info.txt" || fail "the cloth is not resting on the table top"

# A bad mesh named by a scene: the mesh's line and the scene's line
printf '[mesh m]\nfile = bad.obj\n' >"$out/bad.ini"
printf 'v 0 0 0\nv 1 0\n' >"$out/bad.obj"
"$tela" run "$out/bad.ini" 2>"$out/e.txt"
[ $? -eq 3 ] || fail "a scene with a bad OBJ must exit 3"
grep -qF "$out/bad.obj:2: v needs 3 coordinates, found 2 (mesh of 'm', $out/bad.ini:2)" "$out/e.txt" \
  || { cat "$out/e.txt"; fail "message"; }
