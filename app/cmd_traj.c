/* tela traj (placeholder until written) */
#include "cli.h"
int cmd_traj(int argc, char **argv) { (void)argc; (void)argv; return cli_usage_error("traj", "not yet available"); }
