# A 10 cm mesh disc (as in defaults_mesh.sh) with the documented defaults: its innermost
# chords, 1.6 mm, are shorter than the default 3 mm thickness, which the scene's builder
# caps at half of them so that the sheet's own neighbours are not contacts.  It falls
# 1 m onto the floor and rests there, flat, for 10 s.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/defaults.inc"
set -- $(write_disc "$out/disc.stl" 0.05) || fail "could not write the disc"
printf '[plane floor]\n\n[mesh cloth]\nfile = disc.stl\n' >"$out/disc.ini"
mass=$(awk -v a="$1" 'BEGIN { printf "%.9g", 0.2 * a }')
thickness=$(awk -v e="$2" 'BEGIN { printf "%.9g", 0.5 * e }')
check_rests_on_floor "$out/disc.ini" 10 "$mass" 0.1 0.1 "$thickness"
