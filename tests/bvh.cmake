# The broad phase's tree (issue 3): tests/test_bvh.c again on the tree's other vector
# paths, which the processor running the tests may not take by itself: without AVX-512
# (the AVX2 leaf tests, where the processor has AVX2), without either (the SSE ones) and
# without any vector code (the scalar ones).  bvh.c is compiled into each test with the
# switches, so the library's copy is not linked.
foreach(variant avx2 sse scalar)
  if(variant STREQUAL "avx2")
    set(defs BVH_NO_AVX512)
  elseif(variant STREQUAL "sse")
    set(defs BVH_NO_AVX512 BVH_NO_AVX2)
  else()
    set(defs BVH_NO_SSE)
  endif()
  tela_add_test(test_bvh_${variant} SOURCES test_bvh.c ${PROJECT_SOURCE_DIR}/sim/src/bvh.c LIBS tela_sim LABELS unit)
  target_compile_definitions(test_bvh_${variant} PRIVATE ${defs})
endforeach()
