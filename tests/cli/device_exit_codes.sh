# A --device that cannot be opened ends `tela run` and the headless demo with exit 3 and
# the driver's whole message: no tracker on the bus, a PATRIOT still showing its firmware
# loader's id (umockdev's testbed stands in for the bus), a malformed or empty
# polhemus:BUS-ADDR; and the exit codes in `tela --help`, `tela run --help` and
# `tela demo --help` say so.
# labels: cli;device
. "$(dirname "$0")/lib.sh"

command -v umockdev-run >/dev/null 2>&1 || fail "umockdev-run is missing (package umockdev, a declared dependency)"
# libumockdev-preload must come before the sanitizer runtime in an ASan build
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS

# A PATRIOT without its firmware at USB 1-5: the EZ-USB loader's id, 0f44:ef11.
desc=1201000200000040440F11EF0001000000010902120001010080320904000000FF000000
cat >"$out/loader.umockdev" <<END
P: /devices/pci0000:00/usb1/1-1
N: bus/usb/001/005=$desc
E: SUBSYSTEM=usb
E: DEVTYPE=usb_device
E: DEVNAME=/dev/bus/usb/001/005
E: BUSNUM=001
E: DEVNUM=005
E: PRODUCT=f44/ef11/100
A: busnum=1\n
A: devnum=5\n
A: speed=12\n
A: bConfigurationValue=1\n
A: idVendor=0f44\n
A: idProduct=ef11\n
H: descriptors=$desc
END

# expect NAME RC TEXT CMD...: CMD exits with RC and its stderr holds TEXT (fixed string)
expect() {
	name=$1
	want_rc=$2
	text=$3
	shift 3
	timeout -s KILL 60 "$@" >"$out/$name.out" 2>"$out/$name.err"
	rc=$?
	[ "$rc" -eq "$want_rc" ] || fail "$name: exit $rc, expected $want_rc: $(cat "$out/$name.err")"
	grep -F -q -e "$text" "$out/$name.err" || fail "$name: stderr lacks '$text': $(cat "$out/$name.err")"
}

whole='polhemus: found a Polhemus PATRIOT at 1-5 still showing its firmware-loader id 0f44:ef11: its firmware (PatriotUSB.hex (fxload -t fx)) was not loaded; install the 90-Polhemus_trkr.rules udev rule and fxload, then replug the tracker (docs/devices.md, "Polhemus over USB")'
expect run-loader 3 "tela run: --device polhemus: $whole" \
	umockdev-run -d "$out/loader.umockdev" -- "$tela" run hanging --device polhemus --seconds 0.1
expect demo-loader 3 "--device polhemus: $whole" \
	umockdev-run -d "$out/loader.umockdev" -- "$tela" --headless hanging --device polhemus --out "$out/x.png"
[ -e "$out/x.png" ] && fail "the headless demo wrote a picture without its device"
expect run-not-there 3 "no Polhemus tracker at USB 1-9" \
	umockdev-run -d "$out/loader.umockdev" -- "$tela" run hanging --device polhemus:1-9 --seconds 0.1
expect run-none 3 "no Polhemus tracker found on USB" \
	umockdev-run -- "$tela" run hanging --device polhemus --seconds 0.1
expect run-bad-address 3 'bad USB address "one-two"' "$tela" run hanging --device polhemus:one-two --seconds 0.1

# the exit codes as the help gives them
"$tela" --help >"$out/help.txt" 2>&1 || fail "tela --help exited with $?"
sed -n '/^exit codes:/,/^  4 /p' "$out/help.txt" >"$out/codes.txt"
for word in "--device" "firmware" "polhemus:BUS-ADDR"; do
	grep -F -q -e "$word" "$out/codes.txt" || fail "tela --help: exit code 3 does not mention $word"
done
for cmd in run demo; do
	"$tela" $cmd --help >"$out/$cmd-help.txt" 2>&1 || fail "tela $cmd --help exited with $?"
	sed -n '/^exit codes:/,$p' "$out/$cmd-help.txt" | tr '\n' ' ' >"$out/$cmd-codes.txt"
	grep -F -q -e "a --device that cannot be opened" "$out/$cmd-codes.txt" ||
		fail "tela $cmd --help: the exit codes do not mention the device"
done
exit 0
