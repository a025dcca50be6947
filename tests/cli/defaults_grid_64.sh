# A 64 x 64 grid with the documented defaults (tests/data/scenes/defaults-grid-64.ini)
# falls 1 m onto the floor and rests there, flat, for 10 s (1 s in a sanitizer build).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defaults.inc"
seconds=10
is_sanitized && seconds=1
# the default 1 m square at the default 0.2 kg/m^2 and 3 mm (its 16 mm edges keep it)
check_rests_on_floor "$src/tests/data/scenes/defaults-grid-64.ini" $seconds 0.2 1 1 0.003
