# Velocity-constraint files (the seed's vel_* format) and `tela traj` (issue 4).

tela_add_test(test_velocities SOURCES test_velocities.c LIBS tela_sim tela_scenes LABELS unit)
target_compile_definitions(test_velocities PRIVATE
  TELA_VEL_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data/vel"
  TELA_VEL_SCRATCH="${CMAKE_CURRENT_BINARY_DIR}")

# Checks a file written by `tela traj` with awk alone (independent of the C reader): the
# seed layout line by line, every block's count matching its VertexId lines, the given
# vertex ids, non-decreasing times, the number of blocks and first and last times, and
# the displacement sum of velocity * (next time - time), which must equal the sum of the
# segments.  Arguments: file, vertices ("0 10"), blocks, first time, last time, last count
# ("zero": last block holds with zero velocities; "empty": last block has no vectors),
# expected dx dy dz.
set(TELA_TRAJ_AWK [=[
awk -v want_vertices="$3" -v want_blocks="$4" -v t_first="$5" -v t_last="$6" -v last_kind="$7" \
    -v dx="$8" -v dy="$9" -v dz="${10}" '
function fail(msg) { print "FAIL: " FILENAME ":" FNR ": " msg; bad = 1 }
function close_block() {
  if (blocks > 0 && found != declared) fail("block " blocks " declares " declared ", found " found)
}
function abs(x) { return x < 0 ? -x : x }
BEGIN { nv = split(want_vertices, vid, " ") }
$1 == "Time" && NF == 2 {
  close_block()
  if (blocks > 0) {
    for (v in vx) { sx[v] += vx[v] * ($2 - t); sy[v] += vy[v] * ($2 - t); sz[v] += vz[v] * ($2 - t) }
    if ($2 < t) fail("time goes back")
  }
  split("", vx); split("", vy); split("", vz)
  t = $2; blocks++; found = 0; declared = -1
  if (blocks == 1) first = t
  next
}
$1 == "Number" && $2 == "of" && $3 == "constraint" && $4 == "vectors" && NF == 5 { declared = $5; next }
$1 == "VertexId" && $3 == "Vector" && NF == 6 {
  found++
  if ($2 != vid[found]) fail("vertex " $2 ", expected " vid[found])
  vx[$2] = $4; vy[$2] = $5; vz[$2] = $6
  last_speed = abs($4) + abs($5) + abs($6)
  next
}
{ fail("not a seed line: " $0) }
END {
  close_block()
  if (blocks != want_blocks) fail(blocks " blocks, expected " want_blocks)
  if (abs(first - t_first) > 1e-9 || abs(t - t_last) > 1e-9)
    fail("times " first " to " t ", expected " t_first " to " t_last)
  if (last_kind == "zero" && (declared != nv || last_speed != 0)) fail("the last block does not hold the vertices")
  if (last_kind == "empty" && declared != 0) fail("the last block does not release the vertices")
  for (k = 1; k <= nv; k++) {
    v = vid[k]
    if (abs(sx[v] - dx) > 1e-6 || abs(sy[v] - dy) > 1e-6 || abs(sz[v] - dz) > 1e-6)
      fail("vertex " v " moves by " sx[v] " " sy[v] " " sz[v] ", expected " dx " " dy " " dz)
  }
  if (!bad) print "ok: " blocks " blocks, displacement " sx[vid[1]] " " sy[vid[1]] " " sz[vid[1]]
  exit bad
}' "$2"
]=])

# Rest 0.2 s = 10 slots at 50 Hz; segments of 50 and 25 slots.  Blocks: rest, 50, rest,
# 25, the final holding zero block = 78, from 0 to 0.2 + 1 + 0.2 + 0.5 = 1.9 s.
tela_add_sh_test(traj_cli_writes_file "unit;cli" "
\"$1\" traj \"$2\" --vertices 0,10 --segment 0.1,0,0.2,1 --segment 0,0.1,0,0.5 --rest 0.2 --rate 50 || exit 1
set -- \"$1\" \"$2\" '0 10' 78 0 1.9 zero 0.1 0.1 0.2
${TELA_TRAJ_AWK}")

# Defaults (rest 0.5 s, rate 100 Hz) with --start and --release.  Blocks: rest,
# 100 moving, final rest, empty block = 103, from 2 to 2 + 0.5 + 1 + 0.5 = 4 s.
tela_add_sh_test(traj_cli_release "unit;cli" "
\"$1\" traj \"$2\" --vertices 4,2,9 --segment -0.25,0.5,0,1 --start 2 --release || exit 1
set -- \"$1\" \"$2\" '4 2 9' 103 2 4 empty -0.25 0.5 0
${TELA_TRAJ_AWK}")

# Bad command lines exit 2 and say what is wrong.  (No "[" in a MATCH: an unbalanced
# bracket stops CMake from splitting the argument list at semicolons.)
set(traj_seg --segment 0.1,0,0,1)
tela_add_exit_test(traj_cli_unknown_option LABELS "unit;cli" CODE 2 MATCH "unknown option '--speed'"
                   ARGS traj out.vel --vertices 0 ${traj_seg} --speed 3)
tela_add_exit_test(traj_cli_missing_value LABELS "unit;cli" CODE 2 MATCH "option --rate needs a value"
                   ARGS traj out.vel --vertices 0 ${traj_seg} --rate)
tela_add_exit_test(traj_cli_bad_rate LABELS "unit;cli" CODE 2 MATCH "--rate: 'fast' is not a number"
                   ARGS traj out.vel --vertices 0 ${traj_seg} --rate fast)
tela_add_exit_test(traj_cli_zero_rate LABELS "unit;cli" CODE 2 MATCH "--rate: '0' is not a number in (0,"
                   ARGS traj out.vel --vertices 0 ${traj_seg} --rate 0)
tela_add_exit_test(traj_cli_negative_rest LABELS "unit;cli" CODE 2 MATCH "--rest: '-1' is not a number in"
                   ARGS traj out.vel --vertices 0 ${traj_seg} --rest -1)
tela_add_exit_test(traj_cli_no_segment LABELS "unit;cli" CODE 2 MATCH "no --segment given"
                   ARGS traj out.vel --vertices 0)
tela_add_exit_test(traj_cli_no_vertices LABELS "unit;cli" CODE 2 MATCH "no --vertices given"
                   ARGS traj out.vel ${traj_seg})
tela_add_exit_test(traj_cli_no_output LABELS "unit;cli" CODE 2 MATCH "no output file given"
                   ARGS traj --vertices 0 ${traj_seg})
tela_add_exit_test(traj_cli_zero_duration LABELS "unit;cli" CODE 2 MATCH "--segment: '0.1,0,0,0' is not DX,DY,DZ,T"
                   ARGS traj out.vel --vertices 0 --segment 0.1,0,0,0)
tela_add_exit_test(traj_cli_short_segment LABELS "unit;cli" CODE 2 MATCH "--segment: '0.1,0,1' is not DX,DY,DZ,T"
                   ARGS traj out.vel --vertices 0 --segment 0.1,0,1)
tela_add_exit_test(traj_cli_negative_vertex LABELS "unit;cli" CODE 2 MATCH "--vertices: '-3' is not a vertex id"
                   ARGS traj out.vel --vertices 1,-3 ${traj_seg})
tela_add_exit_test(traj_cli_empty_vertex LABELS "unit;cli" CODE 2 MATCH "--vertices: '1,,2' is not a list"
                   ARGS traj out.vel --vertices 1,,2 ${traj_seg})
tela_add_exit_test(traj_cli_repeated_vertex LABELS "unit;cli" CODE 2 MATCH "vertex 1 is listed twice"
                   ARGS traj out.vel --vertices 1,2,1 ${traj_seg})
tela_add_exit_test(traj_cli_too_fast LABELS "unit;cli" CODE 2 MATCH "is over the limit of 1000 m/s"
                   ARGS traj out.vel --vertices 0 --segment 50,0,0,0.02)
tela_add_exit_test(traj_cli_two_outputs LABELS "unit;cli" CODE 2 MATCH "more than one output file"
                   ARGS traj a.vel b.vel --vertices 0 ${traj_seg})

# An output that cannot be written exits 3 and names the file; nothing is left behind.
tela_add_sh_test(traj_cli_unwritable "unit;cli" [=[
"$1" traj "$2/no-such-dir/out.vel" --vertices 0 --segment 0.1,0,0,1 >"$2.log" 2>&1
rc=$?
cat "$2.log"
if [ "$rc" -ne 3 ]
then
  echo "FAIL: exit $rc, expected 3"
  exit 1
fi
grep -F -q "tela traj: $2/no-such-dir/out.vel: cannot open for writing" "$2.log" || { echo "FAIL: message"; exit 1; }
]=])
