/* placeholder until written */
#include "cli.h"
