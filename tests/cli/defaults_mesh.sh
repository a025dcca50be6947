# A mesh cloth from an STL file with the documented defaults (a 1 m disc of 24 sectors
# and 8 rings: thin triangles at the centre, a vertex at 0, 90, 180 and 270 degrees, so
# both spans are its diameter) falls 1 m onto the floor and rests there, flat, for 10 s.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defaults.inc"
set -- $(write_disc "$out/disc.stl" 0.5) || fail "could not write the disc"
printf '[plane floor]\n\n[mesh cloth]\nfile = disc.stl\n' >"$out/disc.ini"
# the default 0.2 kg/m^2 over the disc's area; 3 mm, below half its shortest edge (16 mm)
mass=$(awk -v a="$1" 'BEGIN { printf "%.9g", 0.2 * a }')
check_rests_on_floor "$out/disc.ini" 10 "$mass" 1 1 0.003
