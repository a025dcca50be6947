/* The version text alone, so that a new commit recompiles this file and nothing else. */
#include "cli.h"
#include "tela_version.h"

const char *tela_version(void)
{
	return TELA_VERSION_TEXT;
}
