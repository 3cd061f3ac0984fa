// A tiny LD_PRELOAD malloc counter for the retry-policy benchmarks.
//
// It interposes the allocation functions of glibc, counts every call in process-wide atomic
// counters, and forwards to glibc's own entry points (__libc_malloc and friends), so that it
// never calls dlsym from inside malloc. The benchmark finds the counters at run time with
// dlsym(RTLD_DEFAULT, "malloc_counter_count"); without the preload it prints "n/a".
//
// Build: cc -shared -fPIC -O2 -o libmalloc_counter.so malloc_counter.c
// Use:   LD_PRELOAD=$PWD/libmalloc_counter.so ./retry-policy-benchmarks

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static uint64_t allocations;
static uint64_t deallocations;

static inline void count_allocation(void) {
  __atomic_fetch_add(&allocations, 1, __ATOMIC_RELAXED);
}

/// The number of allocation calls (malloc, calloc, realloc, posix_memalign, aligned_alloc,
/// memalign) since the process started.
uint64_t malloc_counter_count(void) {
  return __atomic_load_n(&allocations, __ATOMIC_RELAXED);
}

/// The number of calls to free with a non-null pointer since the process started.
uint64_t malloc_counter_frees(void) {
  return __atomic_load_n(&deallocations, __ATOMIC_RELAXED);
}

void *malloc(size_t size) {
  count_allocation();
  return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
  count_allocation();
  return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
  count_allocation();
  return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
  count_allocation();
  return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
  count_allocation();
  return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
  // The same checks as glibc: a power of two, a multiple of sizeof(void *).
  if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) {
    return EINVAL;
  }
  count_allocation();
  void *pointer = __libc_memalign(alignment, size);
  if (pointer == NULL) {
    return ENOMEM;
  }
  *result = pointer;
  return 0;
}

void free(void *pointer) {
  if (pointer != NULL) {
    __atomic_fetch_add(&deallocations, 1, __ATOMIC_RELAXED);
  }
  __libc_free(pointer);
}
