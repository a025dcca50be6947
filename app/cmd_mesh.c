/* tela mesh grid|move|info (placeholder until written) */
#include "cli.h"
int cmd_mesh(int argc, char **argv) { (void)argc; (void)argv; return cli_usage_error("mesh", "not yet available"); }
