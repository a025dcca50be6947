# `tela --version` and `tela version`: the CMake project's version, plus `git describe`
# when the build came from a git checkout; app/version.cmake alone (the build step)
# without a .git prints the bare version.
# labels: cli;unit
. "$(dirname "$0")/lib.sh"

version=$(sed -n 's/^project(tela VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || fail "no project(tela VERSION ...) in $src/CMakeLists.txt"

"$tela" --version >"$out/long.txt" 2>&1 || fail "tela --version exited with $?"
"$tela" version >"$out/word.txt" 2>&1 || fail "tela version exited with $?"
cmp -s "$out/long.txt" "$out/word.txt" || fail "tela version and tela --version differ"
[ "$(wc -l <"$out/long.txt")" -eq 1 ] || fail "tela --version prints more than one line"
line=$(cat "$out/long.txt")
case "$line" in
"tela $version") ;;
"tela $version (git "?*")") ;;
*) fail "tela --version printed '$line', not 'tela $version' [(git DESCRIBE)]" ;;
esac
"$tela" --version extra >/dev/null 2>&1
[ $? -eq 2 ] || fail "tela --version extra is not a usage error"

# the build step on a folder without .git (a tarball's), and on one with it
mkdir -p "$out/tarball"
cmake -DSOURCE_DIR="$out/tarball" -DVERSION=9.8.7 -DOUT="$out/tarball.h" -P "$src/app/version.cmake" ||
	fail "app/version.cmake failed without .git"
[ "$(cat "$out/tarball.h")" = '#define TELA_VERSION_TEXT "9.8.7"' ] || fail "without .git: $(cat "$out/tarball.h")"
if command -v git >/dev/null 2>&1; then
	mkdir -p "$out/repo" && git -C "$out/repo" init -q && echo a >"$out/repo/a" &&
		git -C "$out/repo" add a && git -C "$out/repo" -c user.name=t -c user.email=t@t commit -q -m a ||
		fail "could not make a scratch git repository"
	head=$(git -C "$out/repo" rev-parse --short HEAD)
	cmake -DSOURCE_DIR="$out/repo" -DVERSION=9.8.7 -DOUT="$out/repo.h" -P "$src/app/version.cmake" ||
		fail "app/version.cmake failed in a git checkout"
	[ "$(cat "$out/repo.h")" = "#define TELA_VERSION_TEXT \"9.8.7 (git $head)\"" ] || fail "clean checkout: $(cat "$out/repo.h")"
	echo b >"$out/repo/a"
	cmake -DSOURCE_DIR="$out/repo" -DVERSION=9.8.7 -DOUT="$out/repo.h" -P "$src/app/version.cmake" ||
		fail "app/version.cmake failed in a dirty checkout"
	[ "$(cat "$out/repo.h")" = "#define TELA_VERSION_TEXT \"9.8.7 (git $head-dirty)\"" ] || fail "dirty checkout: $(cat "$out/repo.h")"
else
	echo "note: no git here, so the checkout case of app/version.cmake is not exercised"
fi
exit 0
