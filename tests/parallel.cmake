# Parallel work (issue 3): sim's task callbacks and the application's thread pool give the
# inline pipeline's state bit for bit, with any worker count and range order.
tela_add_test(test_parallel SOURCES test_parallel.c LIBS tela_demo_core tela_scenes tela_sim LABELS "unit;golden")

# `tela run --threads N` and `tela bench collisions --threads N`: a bad count is a usage
# error; the pile run on two and three threads ends in the state of the run on one
# (with --check: still intersection-free).
tela_add_exit_test(cli_run_threads_zero LABELS "unit;cli" CODE 2 MATCH "--threads: '0' is not a count in [1, 64]"
  ARGS run pile --threads 0)
tela_add_exit_test(cli_bench_threads_bad LABELS "unit;cli" CODE 2 MATCH "--threads: 'x' is not a count in [1, 64]"
  ARGS bench collisions --threads x)
tela_add_sh_test(cli_run_threads_same_state "unit;cli;golden" [=[
for n in 1 2 3
do
  "$1" run pile --seconds 0.6 --threads $n --check | grep -E "^state hash|intersections" >"$2.$n" || exit 1
  cat "$2.$n"
done
if ! grep -q "^state hash [0-9a-f]" "$2.1"
then
  echo "FAIL: no state hash"
  exit 1
fi
cmp "$2.1" "$2.2" && cmp "$2.1" "$2.3" || { echo "FAIL: the state depends on the thread count"; exit 1; }
]=])
