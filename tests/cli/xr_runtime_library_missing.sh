# A runtime's manifest whose library is not there: Debian's loader fails at its first call
# (xrEnumerateInstanceExtensionProperties) with XR_ERROR_RUNTIME_UNAVAILABLE, before any
# instance exists.  `tela --xr` says the runtime could not start, names the result (not a
# bare number) and the manifest, and exits 5, before it opens a window.
# labels: xr;unit
. "$(dirname "$0")/lib.sh"

cat >"$out/runtime.json" <<EOF
{
    "file_format_version": "1.0.0",
    "runtime": {
        "name": "a runtime that is not installed",
        "library_path": "$out/libnot_installed.so"
    }
}
EOF
XR_RUNTIME_JSON="$out/runtime.json" timeout -s KILL 60 "$tela" --xr hanging >"$out/out.txt" 2>&1
rc=$?
cat "$out/out.txt"
[ "$rc" -eq 5 ] || fail "exit $rc, expected 5"
grep -qF "tela --xr: the OpenXR runtime could not start (xrEnumerateInstanceExtensionProperties: XR_ERROR_RUNTIME_UNAVAILABLE (-51)): is the library its manifest '$out/runtime.json' names there, and its service (if it has one) running? (docs/vr.md)" "$out/out.txt" ||
	fail "the message"
exit 0
