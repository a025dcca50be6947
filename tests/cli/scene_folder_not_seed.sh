# A folder that is not a seed simulator folder is named as such (exit 3), not by the first
# file the seed's reader would have opened in it.
. "$(dirname "$0")/lib.sh"
mkdir -p "$out/plain/sub"
"$tela" run "$out/plain" >"$out/msg.txt" 2>&1
rc=$?
cat "$out/msg.txt"
[ "$rc" -eq 3 ] || fail "exit $rc, expected 3"
grep -q -F "$out/plain: not a scene file or a seed simulator folder" "$out/msg.txt" || fail "no 'not a seed simulator folder' message"
grep -q "world_parameters/world_parameters" "$out/msg.txt" && fail "the message names a file inside the folder"
# a folder with one of the seed's folders is a seed folder missing a file: that file is named
mkdir -p "$out/half/bodies"
"$tela" run "$out/half" >"$out/msg2.txt" 2>&1
rc=$?
cat "$out/msg2.txt"
[ "$rc" -eq 3 ] || fail "exit $rc for a half seed folder, expected 3"
grep -q -F "world_parameters/world_parameters: cannot open" "$out/msg2.txt" || fail "a half seed folder does not name its missing file"
exit 0
