# The collision pipeline's debug data for the demo's views (issue 5): recorded pairs
# against brute-force geometry, predicted positions, hierarchy boxes, and no change to
# the simulation.
tela_add_test(test_debug SOURCES test_debug.c LIBS tela_sim tela_scenes LABELS unit)
