/* `tela ccd DIR...`: runs the continuous collision detection on benchmark query
 * files and compares with their ground truth.  See cmd_ccd.c for the exit codes. */
#ifndef TELA_CMD_CCD_H
#define TELA_CMD_CCD_H

/* argv[0] is "ccd", argv[1..] the directories (or single .csv files). */
int cmd_ccd(int argc, char **argv);

#endif
