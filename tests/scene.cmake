# Scene files, the seed folder and `tela run FILE|NAME|DIR` (issue 4).
tela_add_test(test_scene SOURCES test_scene.c LIBS tela_sim tela_scenes LABELS unit)
target_compile_definitions(test_scene PRIVATE TELA_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data")
# Scenes written back (the demo's "Save scene", `tela run --save-scene`) run the same.
tela_add_test(test_scene_write SOURCES test_scene_write.c LIBS tela_sim tela_scenes LABELS unit)
target_compile_definitions(test_scene_write PRIVATE TELA_TEST_DATA="${CMAKE_CURRENT_SOURCE_DIR}/data")

# The seed folder and the scene file that names the same meshes and constraints build
# the same world: two readers, one state hash after 2 s.
tela_add_sh_test(cli_seed_folder_equals_scene_file "unit;cli" [=[
a=$("$1" run "$3/seed/environment" --seconds 2 | grep '^state hash ') || exit 1
b=$("$1" run "$3/scenes/mesh-on-table.ini" --seconds 2 | grep '^state hash ') || exit 1
echo "seed folder: $a; scene file: $b"
[ -n "$a" ] && [ "$a" = "$b" ]
]=] "${CMAKE_CURRENT_SOURCE_DIR}/data")

# The seed folder (a cloth on a table, one corner held then pulled) stays intersection-free.
tela_add_sh_test(check_seed_folder "validation;collision" [=[
"$1" run "$3/seed/environment" --check --quiet
]=] "${CMAKE_CURRENT_SOURCE_DIR}/data")

# A built-in name and its file under scenes/ are the same scene.
foreach(scene hanging twist)
  tela_add_sh_test(cli_builtin_is_its_file_${scene} "unit;cli" "
a=\$(\"\$1\" run ${scene} --steps 300 | grep '^state hash ') || exit 1
b=\$(\"\$1\" run \"\$3/${scene}.ini\" --steps 300 | grep '^state hash ') || exit 1
echo \"name: \$a; file: \$b\"
[ -n \"\$a\" ] && [ \"\$a\" = \"\$b\" ]
" "${PROJECT_SOURCE_DIR}/scenes")
endforeach()

# Bad scene input exits 3 naming the file and line; a missing file names the path.
tela_add_exit_test(cli_bad_scene_file LABELS "unit;cli" CODE 3 MATCH "bad-line.ini:6: size: '1 one' is not 2 numbers"
                   ARGS run ${CMAKE_CURRENT_SOURCE_DIR}/data/scenes/bad-line.ini)
tela_add_exit_test(cli_missing_scene_file LABELS "unit;cli" CODE 3 MATCH "no-such.ini: no such file or folder"
                   ARGS run no-such.ini)
tela_add_exit_test(cli_bad_seed_folder LABELS "unit;cli" CODE 3 MATCH "bodies/par_cloth:6: density"
                   ARGS run ${CMAKE_CURRENT_SOURCE_DIR}/data/seed-bad/nan-density)
