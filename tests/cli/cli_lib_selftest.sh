# The script harness itself: tela runs, and fail() fails.
. "$(dirname "$0")/lib.sh"
"$tela" scenes >"$out/scenes.txt" || fail "tela scenes exited with $?"
grep -q '^hanging ' "$out/scenes.txt" || fail "tela scenes does not list hanging"
if (fail "expected" >/dev/null); then
	echo "FAIL: fail() did not fail"
	exit 1
fi
