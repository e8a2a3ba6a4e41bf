#if TIERCACHE_TSAN_LOCKS
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value behind a lock: the project's `Mutex`.
///
/// Public as SPI, not `package`, for the reason the other declaration of `Locked` (below) gives.
///
/// Normally it is `Synchronization.Mutex` (a futex on Linux, `os_unfair_lock` on Apple
/// platforms) and costs nothing more. `scripts/tsan` builds with `-DTIERCACHE_TSAN_LOCKS`, and
/// then it is a `pthread_mutex_t`: on Linux ThreadSanitizer does not see the futex that `Mutex`
/// locks with, so it reports every value a `Mutex` guards as a race (checked with a two-line
/// program: 8 threads under one `Mutex`, reported; under a pthread mutex, not), and a real race
/// would drown among them.
@_spi(TierCacheInternals) public struct Locked<Value: ~Copyable>: ~Copyable {
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let storage: UnsafeMutablePointer<Value>

    @inlinable
    public init(_ initialValue: consuming sending Value) {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        storage = .allocate(capacity: 1)
        storage.initialize(to: initialValue)
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, holding the lock.
    @inlinable
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&storage.pointee)
    }
}

// The value is reached only through `withLock`, under the pthread mutex, as with `Mutex`
// (which is Sendable on the same terms).
extension Locked: @unchecked Sendable where Value: ~Copyable {}
#else
import Synchronization

/// A value behind a lock: the project's `Mutex`.
///
/// Public as SPI (`@_spi(TierCacheInternals) import TierCache`), not `package`: the compiler
/// (Swift 6.3) does not specialize a `package` `@inlinable` generic in the package's other
/// modules, so every `withLock` there called the unspecialized function, which looks up
/// `Locked<Value>`'s metadata at run time (a hash-table lookup, about a tenth of the user time
/// of a Redis `GET`, `perf`). Checked with a two-module package: `package`, two calls to the
/// generic function; public, none.
///
/// Normally it is `Synchronization.Mutex` (a futex on Linux, `os_unfair_lock` on Apple
/// platforms) and costs nothing more. `scripts/tsan` builds with `-DTIERCACHE_TSAN_LOCKS`, and
/// then it is a `pthread_mutex_t`: on Linux ThreadSanitizer does not see the futex that `Mutex`
/// locks with, so it reports every value a `Mutex` guards as a race, and a real race would drown
/// among them.
@_spi(TierCacheInternals) public struct Locked<Value: ~Copyable>: ~Copyable, Sendable {
    @usableFromInline let mutex: Mutex<Value>

    @inlinable
    public init(_ initialValue: consuming sending Value) { mutex = Mutex(initialValue) }

    /// Runs `body` with the value, holding the lock.
    @inlinable
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try mutex.withLock(body)
    }
}
#endif
