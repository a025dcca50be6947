/* libFuzzer target for the OBJ reader (scn_obj_parse): the checks of fuzz_mesh.h at three
 * welding tolerances, and the writers' round trips at the default one. */
#include "fuzz_mesh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* exact matching, the default tolerance, and one coarse enough to weld random data */
	fuzz_mesh_one(scn_obj_parse, SCN_MESH_OBJ, "fuzz.obj", data, size, 0.0f, false);
	fuzz_mesh_one(scn_obj_parse, SCN_MESH_OBJ, "fuzz.obj", data, size, SCN_WELD_TOLERANCE, true);
	fuzz_mesh_one(scn_obj_parse, SCN_MESH_OBJ, "fuzz.obj", data, size, 0.05f, false);
	return 0;
}
