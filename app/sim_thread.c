/* placeholder until written */
#include "sim_thread.h"
