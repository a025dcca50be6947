/* placeholder until written */
#include "render.h"
