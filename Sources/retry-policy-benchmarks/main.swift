import RetryPolicy

print("benchmarks: not written yet")
