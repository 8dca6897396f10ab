# bench_nn_step: samples/s of one replica's forward + backward + SGD step (mlp 256x2, mlp
# 2048x2, cnn) at batch 32, against the bare sgemm calls of the same step measured in the same run.
add_executable(bench_nn_step ${CMAKE_CURRENT_LIST_DIR}/nn_step.cc)
target_link_libraries(bench_nn_step PRIVATE stepscope_nn)
