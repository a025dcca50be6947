# A 10 cm, 30 x 30 grid with the documented defaults (tests/data/scenes/
# defaults-grid-small.ini) falls 1 m onto the floor and rests there, flat, for 10 s (1 s
# in a sanitizer build): its thickness is half its 0.1 / 29 m edges, not the default 3 mm.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defaults.inc"
seconds=10
is_sanitized && seconds=1
check_rests_on_floor "$src/tests/data/scenes/defaults-grid-small.ini" $seconds 0.002 0.1 0.1 \
	"$(awk 'BEGIN { printf "%.9g", 0.1 / 29 / 2 }')"
