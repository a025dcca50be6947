# STL import and export, welding, orientation, and `tela mesh grid|move|info`.
tela_add_test(test_stl SOURCES test_stl.c LIBS tela_scenes tela_sim LABELS unit)
target_compile_definitions(test_stl PRIVATE TELA_STL_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data/stl")

set(stl_data "${CMAKE_CURRENT_SOURCE_DIR}/data/stl")

# A 2 x 1 m grid of 4 x 2 cells centred at (1, -1, 0.5): 15 vertices, 16 triangles, 48
# corners (33 welded), 12 border edges; every value below is exact in binary floating point.
tela_add_sh_test(cli_mesh_grid_info "unit;cli" [=[
mkdir -p "$2" || exit 1
"$1" mesh grid "$2/g.stl" --size 2 1 --divisions 4 2 --center 1 -1 0.5 --name sheet || exit 1
[ "$(head -n 1 "$2/g.stl")" = "solid sheet" ] || { echo "FAIL: not 'solid sheet'"; exit 1; }
"$1" mesh info "$2/g.stl" >"$2/info.txt" || exit 1
printf '%s\n' 'format ascii' 'facets 16' 'vertices 15' 'triangles 16' 'welded 33' 'degenerate 0' \
  'bounds 0 -1.5 0.5 2 -0.5 0.5' 'boundary_edges 12' 'nonmanifold_edges 0' 'misoriented_edges 0' \
  'closed no' >"$2/expected.txt"
diff "$2/expected.txt" "$2/info.txt" || { echo "FAIL: mesh info output differs"; exit 1; }
]=])

# --binary writes 84 + 50 * 16 bytes that read back as the same mesh; `move` with no
# transform rewrites it (here as ASCII) with the same welded topology.
tela_add_sh_test(cli_mesh_grid_binary "unit;cli" [=[
mkdir -p "$2" || exit 1
"$1" mesh grid "$2/g.bin" --size 2 1 --divisions 4 2 --center 1 -1 0.5 --binary || exit 1
size=$(wc -c <"$2/g.bin")
[ "$size" -eq 884 ] || { echo "FAIL: $size bytes, expected 884"; exit 1; }
"$1" mesh info "$2/g.bin" >"$2/bin.txt" || exit 1
grep -qx 'format binary' "$2/bin.txt" || { echo "FAIL: not reported as binary"; exit 1; }
"$1" mesh move "$2/g.bin" "$2/g.stl" || exit 1
"$1" mesh info "$2/g.stl" >"$2/ascii.txt" || exit 1
grep -qx 'format ascii' "$2/ascii.txt" || { echo "FAIL: not reported as ASCII"; exit 1; }
sed 1d "$2/bin.txt" >"$2/bin.rest"
sed 1d "$2/ascii.txt" >"$2/ascii.rest"
diff "$2/bin.rest" "$2/ascii.rest" || { echo "FAIL: binary and ASCII differ"; exit 1; }
grep -qx 'vertices 15' "$2/ascii.txt" && grep -qx 'triangles 16' "$2/ascii.txt" || { echo "FAIL: counts"; exit 1; }
]=])

# move: scale, then a quarter turn about z, then translate: the grid's bounds x [0, 2],
# y [-1.5, -0.5], z 0.5 become x [2, 4], y [1, 5], z 2.5 exactly.  The same command twice
# writes the same bytes.
tela_add_sh_test(cli_mesh_move "unit;cli" [=[
mkdir -p "$2" || exit 1
"$1" mesh grid "$2/g.stl" --size 2 1 --divisions 4 2 --center 1 -1 0.5 || exit 1
"$1" mesh move "$2/g.stl" "$2/t.stl" --translate 0.5 0.25 -2 || exit 1
"$1" mesh info "$2/t.stl" >"$2/t.txt" || exit 1
grep -qx 'bounds 0.5 -1.25 -1.5 2.5 -0.25 -1.5' "$2/t.txt" || { cat "$2/t.txt"; echo "FAIL: translated bounds"; exit 1; }
"$1" mesh move "$2/g.stl" "$2/m.stl" --scale 2 --rotate 0 0 90 --translate 1 1 1.5 || exit 1
"$1" mesh move "$2/g.stl" "$2/m2.stl" --scale 2 --rotate 0 0 90 --translate 1 1 1.5 || exit 1
cmp "$2/m.stl" "$2/m2.stl" || { echo "FAIL: two runs differ"; exit 1; }
"$1" mesh info "$2/m.stl" >"$2/m.txt" || exit 1
cat "$2/m.txt"
grep -qx 'bounds 2 1 2.5 4 5 2.5' "$2/m.txt" || { echo "FAIL: moved bounds"; exit 1; }
grep -qx 'vertices 15' "$2/m.txt" && grep -qx 'triangles 16' "$2/m.txt" && grep -qx 'misoriented_edges 0' "$2/m.txt" \
  || { echo "FAIL: topology changed"; exit 1; }
]=])

# The seed's `fabricCreator environment/bodies/dpo_clothDoc cloth 1 1 15 15 0.4 0.3 1.3`.
tela_add_sh_test(cli_mesh_seed_fabric_creator "unit;cli" [=[
mkdir -p "$2" || exit 1
"$1" mesh grid "$2/dpo_clothDoc" --name cloth --size 1 1 --divisions 15 15 --center 0.4 0.3 1.3 || exit 1
[ "$(head -n 1 "$2/dpo_clothDoc")" = "solid cloth" ] || { echo "FAIL: not 'solid cloth'"; exit 1; }
[ "$(grep -c 'facet normal 0 0 1$' "$2/dpo_clothDoc")" -eq 450 ] || { echo "FAIL: not 450 facets facing +z"; exit 1; }
"$1" mesh info "$2/dpo_clothDoc" >"$2/info.txt" || exit 1
cat "$2/info.txt"
awk '
$1 == "vertices" && $2 == 256 { ok++ }
$1 == "triangles" && $2 == 450 { ok++ }
$1 == "boundary_edges" && $2 == 60 { ok++ }
$1 == "bounds" {
  split("-0.1 -0.2 1.3 0.9 0.8 1.3", want, " ")
  for (k = 1; k <= 6; k++) { d = $(k + 1) - want[k]; if (d > 1e-6 || d < -1e-6) bad = 1 }
  if (!bad) ok++
}
END { exit ok == 4 ? 0 : 1 }' "$2/info.txt" || { echo "FAIL: counts or bounds"; exit 1; }
]=])

# A closed mesh from a file without extension: closed, volume 1.
tela_add_sh_test(cli_mesh_info_cube "unit;cli" [=[
"$1" mesh info "$3/cube" >"$2" || exit 1
cat "$2"
for line in 'format ascii' 'vertices 8' 'triangles 12' 'welded 28' 'closed yes' 'volume 1' 'boundary_edges 0'
do
  grep -qx "$line" "$2" || { echo "FAIL: no line '$line'"; exit 1; }
done
]=] "${stl_data}")

# Degenerate facets are removed with a warning naming the first one's line.
tela_add_sh_test(cli_mesh_degenerate_warning "unit;cli" [=[
"$1" mesh info "$3/degenerate.stl" >"$2.out" 2>"$2.err" || exit 1
cat "$2.out" "$2.err"
grep -qF "tela mesh: warning: $3/degenerate.stl:16: removed 1 degenerate triangles" "$2.err" || { echo "FAIL: warning"; exit 1; }
grep -qx 'degenerate 1' "$2.out" && grep -qx 'triangles 2' "$2.out" && grep -qx 'facets 3' "$2.out" \
  || { echo "FAIL: counts"; exit 1; }
]=] "${stl_data}")

# Bad command lines exit 2.
tela_add_exit_test(cli_mesh_no_subcommand LABELS "unit;cli" CODE 2 MATCH "needs a subcommand" ARGS mesh)
tela_add_exit_test(cli_mesh_unknown_subcommand LABELS "unit;cli" CODE 2 MATCH "unknown subcommand 'frob'"
                   ARGS mesh frob)
tela_add_exit_test(cli_mesh_size_zero LABELS "unit;cli" CODE 2 MATCH "--size: '0' is not positive"
                   ARGS mesh grid out.stl --size 0 1 --divisions 1 1)
tela_add_exit_test(cli_mesh_size_not_number LABELS "unit;cli" CODE 2 MATCH "--size: 'abc' is not a number"
                   ARGS mesh grid out.stl --size 1 abc --divisions 1 1)
tela_add_exit_test(cli_mesh_size_missing_value LABELS "unit;cli" CODE 2 MATCH "option --size needs 2 values"
                   ARGS mesh grid out.stl --size 1)
tela_add_exit_test(cli_mesh_divisions_zero LABELS "unit;cli" CODE 2
                   MATCH "--divisions: '0' is not a whole number from 1 to 100000"
                   ARGS mesh grid out.stl --size 1 1 --divisions 0 3)
tela_add_exit_test(cli_mesh_no_size LABELS "unit;cli" CODE 2 MATCH "--size W L is required"
                   ARGS mesh grid out.stl --divisions 2 2)
tela_add_exit_test(cli_mesh_unknown_option LABELS "unit;cli" CODE 2 MATCH "unknown option '--frobnicate'"
                   ARGS mesh grid out.stl --size 1 1 --divisions 1 1 --frobnicate)
tela_add_exit_test(cli_mesh_info_binary_option LABELS "unit;cli" CODE 2 MATCH "unknown option '--binary'"
                   ARGS mesh info ${stl_data}/cube --binary)
tela_add_exit_test(cli_mesh_scale_negative LABELS "unit;cli" CODE 2 MATCH "--scale: '-1' is not positive"
                   ARGS mesh move ${stl_data}/cube out.stl --scale -1)
tela_add_exit_test(cli_mesh_move_no_output LABELS "unit;cli" CODE 2 MATCH "needs an input and an output file"
                   ARGS mesh move ${stl_data}/cube)
tela_add_exit_test(cli_mesh_move_too_far LABELS "unit;cli" CODE 2 MATCH "beyond the coordinate limit of 1e6 m"
                   ARGS mesh move ${stl_data}/cube out.stl --translate 1000000 0 0)

# Unreadable or malformed input and unwritable output exit 3, naming the file and line.
tela_add_exit_test(cli_mesh_truncated LABELS "unit;cli" CODE 3
                   MATCH "tela mesh: ${stl_data}/truncated.stl:6: truncated: the file ends here, expected 'vertex' or 'endloop'"
                   ARGS mesh info ${stl_data}/truncated.stl)
tela_add_exit_test(cli_mesh_nan LABELS "unit;cli" CODE 3
                   MATCH "${stl_data}/nan.stl:5: vertex coordinate 'nan' is not a finite number"
                   ARGS mesh move ${stl_data}/nan.stl out.stl --translate 1 0 0)
tela_add_exit_test(cli_mesh_zero_area LABELS "unit;cli" CODE 3
                   MATCH "${stl_data}/zero_area.stl: no non-degenerate triangles"
                   ARGS mesh info ${stl_data}/zero_area.stl)
tela_add_exit_test(cli_mesh_missing_file LABELS "unit;cli" CODE 3
                   MATCH "${stl_data}/no-such-file: cannot open"
                   ARGS mesh info ${stl_data}/no-such-file)
tela_add_sh_test(cli_mesh_unwritable "unit;cli" [=[
"$1" mesh grid "$2/no/such/dir/g.stl" --size 1 1 --divisions 1 1 2>"$2.err"
rc=$?
cat "$2.err"
[ "$rc" -eq 3 ] || { echo "FAIL: exit $rc, expected 3"; exit 1; }
grep -qF "$2/no/such/dir/g.stl: cannot write" "$2.err" || { echo "FAIL: message"; exit 1; }
]=])

# A binary file cut inside its 16th facet: the message gives that facet's byte offset.
tela_add_sh_test(cli_mesh_binary_truncated "unit;cli" [=[
mkdir -p "$2" || exit 1
"$1" mesh grid "$2/g.bin" --size 2 1 --divisions 4 2 --binary || exit 1
head -c 850 "$2/g.bin" >"$2/cut.bin"
"$1" mesh info "$2/cut.bin" 2>"$2/err.txt"
rc=$?
cat "$2/err.txt"
[ "$rc" -eq 3 ] || { echo "FAIL: exit $rc, expected 3"; exit 1; }
grep -qF "$2/cut.bin: byte 834: truncated in facet 16 of the 16" "$2/err.txt" || { echo "FAIL: message"; exit 1; }
]=])

# OBJ and PLY: the readers, the writers' round trips and exported frames.
tela_add_test(test_meshio SOURCES test_meshio.c LIBS tela_scenes tela_sim LABELS unit)
