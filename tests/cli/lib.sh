# Sourced by every command-line test script (tests/cli/NAME.sh), run by ctest as
#   sh tests/cli/NAME.sh TELA SCRATCH SOURCE_DIR [ARGS...]
# It sets $tela, $out (a fresh scratch folder) and $src, and gives fail().
tela=$1
out=$2
src=$3
shift 3
rm -rf "$out" && mkdir -p "$out" || exit 1

fail() {
	echo "FAIL: $*"
	exit 1
}
