# Trace reading benchmark: bench_trace_read FILE... prints MB/s, events/s and peak RSS for the
# reader + importer; bench/trace_bench.sh generates a large trace and compares with json.loads.
add_executable(bench_trace_read ${CMAKE_CURRENT_LIST_DIR}/trace_read.cc)
target_link_libraries(bench_trace_read PRIVATE stepscope_trace)
