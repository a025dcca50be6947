# A 10 x 10 grid with the documented defaults (tests/data/scenes/defaults-grid-10.ini)
# falls 1 m onto the floor and rests there, flat, for 10 s.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defaults.inc"
# the default 1 m square at the default 0.2 kg/m^2 and 3 mm
check_rests_on_floor "$src/tests/data/scenes/defaults-grid-10.ini" 10 0.2 1 1 0.003
