# bench_model_whatif: how long the step-time model takes to answer a what-if grid (100
# configurations) over a replica curve to 4,096, against the same grid at 16 replicas only.
add_executable(bench_model_whatif ${CMAKE_CURRENT_LIST_DIR}/model_whatif.cc)
target_link_libraries(bench_model_whatif PRIVATE stepscope_model)
