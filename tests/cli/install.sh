# `cmake --install BUILD --prefix P` puts tela, the Polhemus udev rule, the desktop entry,
# its icon, the man page and the docs under P, and the installed tela runs from there
# (away from the source and build trees).  BUILD is the tree the tested tela was built
# in: its app/ folder holds the executable.
# labels: cli;install
. "$(dirname "$0")/lib.sh"

build=$(cd "$(dirname "$tela")/.." && pwd)
[ -f "$build/cmake_install.cmake" ] || fail "$build is not a CMake build tree (no cmake_install.cmake)"
prefix=$out/prefix
cmake --install "$build" --prefix "$prefix" >"$out/install.txt" 2>&1 || { cat "$out/install.txt"; fail "cmake --install failed"; }

# the executable, run from elsewhere
bin=$prefix/bin/tela
[ -x "$bin" ] || fail "no executable $bin"
mkdir -p "$out/elsewhere" && cd "$out/elsewhere" || exit 1
version=$(sed -n 's/^project(tela VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
"$bin" --version >version.txt 2>&1 || fail "installed tela --version exited with $?"
grep -q "^tela $version\b" version.txt || fail "installed tela --version: $(cat version.txt), expected tela $version"
"$tela" --version | cmp -s - version.txt || fail "the installed tela is not the one built"
"$bin" scenes >scenes.txt || fail "installed tela scenes exited with $?"
grep -q '^hanging ' scenes.txt || fail "installed tela scenes does not list hanging"
"$bin" run hanging --seconds 0.2 >run.txt 2>&1 || { cat run.txt; fail "installed tela run hanging exited with $?"; }
grep -q '200 steps' run.txt || fail "installed tela run hanging --seconds 0.2 did not run 200 steps: $(cat run.txt)"
doc=$prefix/share/doc/tela
"$bin" run "$doc/examples/my-scene.ini" --seconds 0.2 --check --quiet ||
	fail "the installed example scene does not run (exit $?)"

# the udev rule: for every tracker of docs/devices.md's table, the firmware id is opened
# to users, and the loader id's fxload line is there, commented out until enabled
rule=$prefix/lib/udev/rules.d/90-polhemus-tela.rules
[ -f "$rule" ] || fail "no udev rule $rule"
sed -n 's/^| [A-Z][A-Z ]* | `\([0-9a-f]\{4\}\)` | `\([0-9a-f]\{4\}\)` |.*/\1 \2/p' "$src/docs/devices.md" >ids.txt
[ "$(wc -l <ids.txt)" -eq 4 ] || fail "expected 4 trackers in docs/devices.md's table, read: $(cat ids.txt)"
while read -r id loader; do
	grep -q "^SUBSYSTEM==\"usb\", ATTR{idVendor}==\"0f44\", ATTR{idProduct}==\"$id\", MODE=\"0666\"$" "$rule" ||
		fail "the udev rule does not open 0f44:$id to users"
	grep -q "^#SUBSYSTEM==\"usb\", ACTION==\"add\", ATTR{idVendor}==\"0f44\", ATTR{idProduct}==\"$loader\", RUN+=\"/sbin/fxload " "$rule" ||
		fail "the udev rule has no commented fxload line for the loader id 0f44:$loader"
done <ids.txt
grep -q '^[^#].*fxload' "$rule" && fail "an fxload line is enabled by default"
if command -v udevadm >/dev/null 2>&1 && udevadm verify --help >/dev/null 2>&1; then
	udevadm verify "$rule" || fail "udevadm verify refuses the rule"
fi

# the desktop entry and its icon
desktop=$prefix/share/applications/tela.desktop
icon=$prefix/share/icons/hicolor/scalable/apps/tela.svg
[ -f "$desktop" ] || fail "no desktop entry $desktop"
[ -f "$icon" ] || fail "no icon $icon"
[ "$(head -n 1 "$desktop")" = "[Desktop Entry]" ] || fail "the desktop entry does not start with [Desktop Entry]"
for key in Type=Application Name=tela "Exec=tela" Icon=tela Terminal=false Categories=; do
	grep -q "^$key" "$desktop" || fail "the desktop entry has no $key"
done
if command -v desktop-file-validate >/dev/null 2>&1; then
	desktop-file-validate "$desktop" >validate.txt 2>&1 || fail "desktop-file-validate refuses $desktop: $(cat validate.txt)"
	[ -s validate.txt ] && fail "desktop-file-validate has remarks: $(cat validate.txt)"
else
	echo "note: desktop-file-validate is not installed; checked the entry's keys only"
fi
if command -v xmllint >/dev/null 2>&1; then
	xmllint --noout "$icon" || fail "the icon is not well-formed XML"
fi
grep -q '<svg xmlns="http://www.w3.org/2000/svg"' "$icon" || fail "the icon is not an SVG"

# the man page: it formats without warnings and has the sections a man page needs
man1=$prefix/share/man/man1/tela.1
[ -f "$man1" ] || fail "no man page $man1"
if command -v groff >/dev/null 2>&1; then
	LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$man1" >groff.txt 2>&1 || fail "groff failed on the man page"
	[ -s groff.txt ] && fail "groff warns about the man page: $(cat groff.txt)"
fi
if command -v man >/dev/null 2>&1; then
	LC_ALL=C MANWIDTH=80 man -l "$man1" >man.txt 2>man.err || fail "man -l failed: $(cat man.err)"
	[ -s man.err ] && fail "man -l complains: $(cat man.err)"
	grep -q '^NAME' man.txt || fail "man -l shows no NAME section"
fi
for section in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS "EXIT STATUS" ENVIRONMENT FILES "SEE ALSO"; do
	grep -q "^\.SH \"*$section\"*$" "$man1" || fail "the man page has no $section section"
done
# the words as the page spells them, its escaped hyphens read as hyphens
sed 's/\\-/-/g' "$man1" >man-text.txt
for word in "tela run" "tela scenes" "tela bench" "tela ccd" "tela mesh" "tela traj" --xr --version --help \
	90-polhemus-tela.rules share/doc/tela; do
	grep -q -e "$word" man-text.txt || fail "the man page does not mention $word"
done
for code in 0 1 2 3 4 5; do
	grep -A1 '^\.TP' "$man1" | grep -q "^\.B $code$" || fail "the man page lists no exit status $code"
done

# the docs and the examples
for f in README.md user-guide.md devices.md scene-format.md tools.md vr.md examples/my-scene.ini \
	examples/stylus.ini examples/desk.cal examples/stage.cal examples/session.rec examples/corner.vel; do
	[ -f "$doc/$f" ] || fail "no $doc/$f"
done
exit 0
