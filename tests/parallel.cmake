# Parallel work (issue 3): sim's task callbacks and the application's thread pool give the
# inline pipeline's state bit for bit, with any worker count and range order.
tela_add_test(test_parallel SOURCES test_parallel.c LIBS tela_demo_core tela_scenes tela_sim LABELS "unit;golden")
