#ifndef TIERCACHE_CPREFETCH_SHIM_H
#define TIERCACHE_CPREFETCH_SHIM_H
// Swift has no prefetch instruction of its own. A static inline function is compiled into the
// Swift module that calls it and inlined there: the call becomes one `prefetcht0`, nothing more.

/// Asks the CPU to start loading the cache line holding `address`, for a read soon.
/// A hint only: it never faults, whatever the address.
static inline void tiercache_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
