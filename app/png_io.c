/* placeholder until written */
#include "png_io.h"
