# bench_allreduce: our all-reduce algorithms against MPI_Allreduce, measured in one run
# (run it with bench/allreduce.sh, or under scripts/mpirun-local.sh 2).
add_executable(bench_allreduce ${CMAKE_CURRENT_LIST_DIR}/allreduce_main.cc)
target_link_libraries(bench_allreduce PRIVATE stepscope_comm CLI11::CLI11)
