# SIGINT and SIGTERM end a long headless demo within a second (checked against a generous
# 5 s), with exit 130 and 143: the summary of the steps made, and no picture, neither
# under its name nor half-written beside it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/signal.inc"

for sig in INT TERM; do
	mkdir -p "$out/$sig"
	png="$out/$sig/cloth.png"
	"$tela" --headless hanging --seconds 100000 --out "$png" >"$out/$sig.out" 2>"$out/$sig.err" &
	pid=$!
	start_guard $pid
	# long enough to be stepping (the offscreen context and the scene come first); a
	# signal before that must end it the same way
	sleep 3
	signal_and_wait $pid $sig
	echo "SIG$sig: exit $rc after $took s"
	cat "$out/$sig.out" "$out/$sig.err"
	case $sig in INT) want=130 ;; TERM) want=143 ;; esac
	[ $rc -eq $want ] || fail "SIG$sig: exit $rc, expected $want"
	awk -v t="$took" 'BEGIN { exit !(t < 5.0) }' || fail "SIG$sig: took $took s to end"
	grep -q "^picture: none, stopped by SIG$sig$" "$out/$sig.out" || fail "SIG$sig: no line saying no picture"
	grep -q "^scene hanging: [0-9]* steps" "$out/$sig.out" || fail "SIG$sig: no summary of the steps made"
	[ -z "$(ls -A "$out/$sig")" ] || fail "SIG$sig: files left: $(ls -A "$out/$sig")"
done
