/* placeholder until written */
#include "camera.h"
