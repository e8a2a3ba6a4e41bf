import Foundation
import Testing

@_spi(TierCacheInternals) @testable import TierCache

/// `TieredCache.invalidate(_:above:)` and `invalidateAll(above:)`, what a shared tier's
/// invalidations call, and the guard that keeps a promotion racing one from putting back the value
/// it removed.
@Suite("TieredCache: invalidations from a shared tier")
struct TieredCacheInvalidationTests {
    let key = CacheKey(digestOf: "k".utf8)
    func entry(_ byte: UInt8) -> CacheEntry { CacheEntry(value: [byte], storedAt: Date()) }

    @Test("An invalidation removes the keys from every tier above the one named, and leaves it")
    func invalidateAbove() async throws {
        let memory = try MemoryTier(capacity: 1 << 20)
        let disk = DictionaryTier(name: "disk", capacity: 1 << 20)
        let shared = DictionaryTier(name: "shared", medium: .remote, capacity: 1 << 20)
        let cache = TieredCache(tiers: [memory, disk, shared])
        let other = try CacheKey("other")
        _ = await cache.store(entry(1), forKey: key, policy: .allowed)
        _ = await cache.store(entry(2), forKey: other, policy: .allowed)

        try await cache.invalidate([key], above: 2)
        #expect(memory.entry(forKey: key) == nil && disk.entry(forKey: key) == nil)
        #expect(shared.entry(forKey: key)?.value == [1])
        #expect(memory.entry(forKey: other)?.value == [2] && disk.entry(forKey: other)?.value == [2])

        try await cache.invalidateAll(above: 2)
        #expect(memory.entry(forKey: other) == nil && disk.entry(forKey: other) == nil)
        #expect(shared.entry(forKey: other)?.value == [2])
    }

    @Test("An upper tier that cannot remove the key makes the invalidation throw, after trying the others")
    func failureIsReported() async throws {
        let memory = try MemoryTier(capacity: 1 << 20)
        let cache = TieredCache(tiers: [FailingTier(), memory, DictionaryTier(medium: .remote, capacity: 1 << 20)])
        _ = memory.store(entry(1), forKey: key)
        await #expect(throws: TierCacheError.self) { try await cache.invalidate([key], above: 2) }
        #expect(memory.entry(forKey: key) == nil)
    }

    /// A memory tier over a gated shared tier holding `[1]` under `key`, and a lookup of it that
    /// reads the value, then waits at the gate while `invalidation` runs (another process wrote
    /// the key); returns what the lookup answered.
    func racingLookup(
        _ invalidation: (TieredCache) async throws -> Void
    ) async throws -> (hit: TieredCache.Hit?, memory: MemoryTier, cache: TieredCache) {
        let memory = try MemoryTier(capacity: 1 << 20)
        let shared = GatedTier()
        let cache = TieredCache(tiers: [memory, shared])
        _ = try await shared.store(entry(1), forKey: key)
        shared.reads.close()
        async let hit = cache.lookup(key)
        await shared.reads.waitUntilHeld()
        try await invalidation(cache)
        shared.reads.open()
        return (await hit, memory, cache)
    }

    @Test("A promotion that read the old value before an invalidation does not put it back after")
    func racingPromotionIsUndone() async throws {
        let (hit, memory, cache) = try await racingLookup { try await $0.invalidate([key], above: 1) }
        #expect(hit?.entry.value == [1])  // answered: it was the value when read
        #expect(memory.entry(forKey: key) == nil)  // but not kept above
        // With nothing racing it, a promotion stays.
        #expect(await cache.lookup(key)?.tierIndex == 1)
        #expect(memory.entry(forKey: key)?.value == [1])
    }

    @Test("A flush undoes racing promotions of every key")
    func flushUndoesPromotions() async throws {
        let (_, memory, _) = try await racingLookup { try await $0.invalidateAll(above: 1) }
        #expect(memory.entry(forKey: key) == nil)
    }

    @Test("A promotion racing a store of the key does not overwrite the new value with the old")
    func racingStore() async throws {
        let (_, memory, cache) = try await racingLookup {
            _ = await $0.store(entry(2), forKey: key, policy: .allowed)
        }
        #expect(memory.entry(forKey: key)?.value != [1])
        #expect(await cache.lookup(key)?.entry.value == [2])
    }

    @Test("A promotion checks before each store: a write that ended meanwhile is not overwritten, even for a moment")
    func promotionChecksBeforeEachStore() async throws {
        let memory = try MemoryTier(capacity: 1 << 20)
        let middle = WatchingTier(watched: memory, key: key)
        let shared = GatedTier()
        let cache = TieredCache(tiers: [memory, middle, shared])
        _ = try await shared.store(entry(1), forKey: key)
        shared.reads.close()
        async let hit = cache.lookup(key)
        await shared.reads.waitUntilHeld()
        // The write reaches every tier and returns while the lookup holds the old value.
        _ = await cache.store(entry(2), forKey: key, policy: .allowed)
        #expect(memory.entry(forKey: key)?.value == [2])
        shared.reads.open()
        #expect(await hit?.entry.value == [1])  // answered: it was the value when read
        // No moment when a tier held the old value over the write that had returned: the
        // promotion checked before its first store and stopped (the tier below memory never got
        // it, and memory neither before nor after it).
        #expect(!middle.storedValues.contains([1]), "the tier below memory got \(middle.storedValues)")
        #expect(!middle.seenAboveWhenStored.contains([1]), "memory held \(middle.seenAboveWhenStored)")
        #expect(memory.entry(forKey: key)?.value != [1])
        #expect(await cache.lookup(key)?.entry.value == [2])
    }

    /// A memory tier over a tier whose first store is held (closed here), over a shared tier
    /// holding `[1]` under `key`: a lookup of it promotes into the middle tier, then waits.
    func promotionHeldInTheMiddle() throws -> (memory: MemoryTier, middle: FirstStoreHeldTier, cache: TieredCache) {
        let memory = try MemoryTier(capacity: 1 << 20)
        let middle = FirstStoreHeldTier()
        let shared = DictionaryTier(name: "shared", medium: .remote, capacity: 1 << 20)
        _ = shared.store(entry(1), forKey: key)
        middle.firstStore.close()
        return (memory, middle, TieredCache(tiers: [memory, middle, shared]))
    }

    @Test("An undone promotion takes back the copies another lookup made above it from the tier it stored in")
    func undoReachesCopiesAbove() async throws {
        let (memory, middle, cache) = try promotionHeldInTheMiddle()
        middle.firstStoreWritten.close()
        // The promotion into the middle tier checks, then stores (an LMDB commit) only after a
        // removal of the key has run through every tier and returned.
        async let promoting = cache.lookup(key)
        await middle.firstStore.waitUntilHeld()
        try await cache.removeEntry(forKey: key)
        middle.firstStore.open()
        await middle.firstStoreWritten.waitUntilHeld()
        // A lookup begun after the removal finds the old value in the middle tier and copies it
        // into memory: it saw no change since it began.
        #expect(await cache.lookup(key)?.tierIndex == 1)
        middle.firstStoreWritten.open()
        #expect(await promoting?.entry.value == [1])  // answered: it was the value when read
        // The first promotion meets the removal and takes the old value back from the middle tier
        // and from memory, where the second put it.
        #expect(memory.entry(forKey: key) == nil && middle.storedValue(forKey: key) == nil)
        #expect(await cache.lookup(key) == nil)
    }

    @Test("A promotion that stopped before storing anything removes nothing: a memory-only write made meanwhile stays")
    func stoppedPromotionKeepsANewerWrite() async throws {
        let (hit, memory, cache) = try await racingLookup {
            _ = await $0.store(entry(2), forKey: key, policy: .allowedInMemoryOnly)
        }
        #expect(hit?.entry.value == [1])  // answered: it was the value when read
        // The write kept the new value in memory alone (and removed the old one below); the
        // promotion saw it and stored nothing, so it has nothing to take back.
        #expect(memory.entry(forKey: key)?.value == [2])
        #expect(await cache.lookup(key)?.entry.value == [2])
    }

    @Test("A promotion racing a removal of the key does not bring the removed value back")
    func racingRemoval() async throws {
        let (_, memory, cache) = try await racingLookup { try await $0.removeEntry(forKey: key) }
        #expect(memory.entry(forKey: key) == nil)
        #expect(await cache.lookup(key) == nil)
    }

    @Test("A lookup while a removal is still reaching the lower tier does not leave the old value above")
    func lookupDuringASlowRemoval() async throws {
        let memory = try MemoryTier(capacity: 1 << 20)
        let shared = GatedTier()
        let cache = TieredCache(tiers: [memory, shared])
        _ = await cache.store(entry(1), forKey: key, policy: .allowed)
        shared.changes.close()
        async let removal: Void = cache.removeEntry(forKey: key)
        await shared.changes.waitUntilHeld()
        // The removal has passed the memory tier; the shared tier still holds the old value.
        #expect(await cache.lookup(key)?.entry.value == [1])
        #expect(memory.entry(forKey: key) == nil, "the old value is not kept above")
        shared.changes.open()
        try await removal
        #expect(await cache.lookup(key) == nil)
        #expect(memory.entry(forKey: key) == nil)
    }

    /// The undo removed the key from every tier above the hit, the write's new value with it,
    /// while the write's report said stored.
    @Test("An undone promotion leaves a memory-only write made meanwhile in the tier it did not store in")
    func undoKeepsAMemoryOnlyWrite() async throws {
        let (memory, middle, cache) = try promotionHeldInTheMiddle()
        async let promoting = cache.lookup(key)
        await middle.firstStore.waitUntilHeld()
        // While the promotion's store into the middle tier waits, a write keeps a new value in
        // memory alone (and removes the key below).
        let report = await cache.store(entry(2), forKey: key, policy: .allowedInMemoryOnly)
        #expect(report.isStoredAnywhere)
        middle.firstStore.open()
        #expect(await promoting?.entry.value == [1])  // answered: it was the value when read
        // The promotion takes back what it stored (the middle tier's old value), not the write.
        #expect(middle.storedValue(forKey: key) == nil)
        #expect(memory.entry(forKey: key)?.value == [2])
        #expect(await cache.lookup(key)?.entry.value == [2])
    }

    /// A memory tier over a gated disk-like tier over a shared one, the gated tier holding `[1]`
    /// under `key`; `invalidation` is held at the gated tier's change (after it has passed the
    /// memory tier) while a lookup reads the old value there and promotes it.
    func lookupDuringASlowInvalidation(
        _ invalidation: @escaping @Sendable (TieredCache) async throws -> Void
    ) async throws -> MemoryTier {
        let memory = try MemoryTier(capacity: 1 << 20)
        let disk = GatedTier()
        let shared = DictionaryTier(name: "shared", medium: .remote, capacity: 1 << 20)
        let cache = TieredCache(tiers: [memory, disk, shared])
        _ = try await disk.store(entry(1), forKey: key)
        disk.changes.close()
        let applying = Task { try await invalidation(cache) }
        await disk.changes.waitUntilHeld()
        #expect(await cache.lookup(key)?.entry.value == [1], "read from the tier not yet reached")
        disk.changes.open()
        try await applying.value
        return memory
    }

    @Test("A lookup while an invalidation is still reaching a lower tier does not leave the old value above")
    func lookupDuringASlowInvalidation() async throws {
        let memory = try await lookupDuringASlowInvalidation { [key] in try await $0.invalidate([key], above: 2) }
        #expect(memory.entry(forKey: key) == nil)
    }

    @Test("A lookup while a flush is still reaching a lower tier does not leave the old value above")
    func lookupDuringASlowFlush() async throws {
        let memory = try await lookupDuringASlowInvalidation { try await $0.invalidateAll(above: 2) }
        #expect(memory.entry(forKey: key) == nil)
    }

    /// Two writes of one key at once, the first held at the lower tier: the second, started
    /// then, must not pass it (in the memory tier it would come after the first, in the lower
    /// tier before, and the lower tier would keep the older value).
    @Test("Two writes of one key at once take turns: every tier ends with the newer value")
    func overlappingWritesTakeTurns() async throws {
        let memory = try MemoryTier(capacity: 1 << 20)
        let lower = FirstStoreHeldTier()
        let cache = TieredCache(tiers: [memory, lower])
        lower.firstStore.close()
        let older = Task { [key] in await cache.store(entry(1), forKey: key, policy: .allowed) }
        await lower.firstStore.waitUntilHeld()
        let finished = Record()
        let newer = Task { [key] in
            _ = await cache.store(entry(2), forKey: key, policy: .allowed)
            await finished.append(2)
        }
        // Until the newer write waits its turn (or, were writes not ordered, has finished).
        while await finished.numbers.isEmpty, cache.lanes.waitingCount(key) == 0 { await Task.yield() }
        lower.firstStore.open()
        _ = await older.value
        await newer.value
        #expect(memory.entry(forKey: key)?.value == [2])
        #expect(try await lower.entry(forKey: key)?.value == [2], "the older value stayed below")
    }

    @Test("Write lanes: a change waits for the one ahead of it on its key, in order, and not for other keys")
    func writeLanes() async throws {
        let lanes = WriteLanes()
        let a = try CacheKey("a"), b = try CacheKey("b")
        await lanes.enter(a)
        await lanes.enter(b)  // another key: at once
        let order = Record()
        var waiters: [Task<Void, Never>] = []
        for number in 1...3 {
            waiters.append(
                Task {
                    await lanes.enter(a)
                    await order.append(number)
                    lanes.leave(a)
                })
            // One at a time, so that they queue in this order.
            while lanes.waitingCount(a) < number { await Task.yield() }
        }
        #expect(await order.numbers.isEmpty, "none entered while the lane was taken")
        lanes.leave(a)
        for waiter in waiters { await waiter.value }
        #expect(await order.numbers == [1, 2, 3])
        lanes.leave(b)
        await lanes.enter(a)  // free again
        lanes.leave(a)
        #expect(lanes.isIdle, "an idle lane is let go")
    }

    @Test("A change under way answers for its key until it ends, and its end is a record of its own")
    func changesUnderWay() throws {
        let log = InvalidationLog(capacity: 16)
        let a = try CacheKey("a"), b = try CacheKey("b")
        log.beginChange(a)
        let during = log.mark()
        #expect(log.wasInvalidated(a, since: during) && !log.wasInvalidated(b, since: during))
        log.endChange(a)
        #expect(log.wasInvalidated(a, since: during), "the end is recorded after the mark")
        #expect(!log.wasInvalidated(a, since: log.mark()))
        log.beginChange(nil)
        #expect(log.wasInvalidated(b, since: log.mark()), "a flush under way answers for every key")
        log.endChange(nil)
        #expect(!log.wasInvalidated(b, since: log.mark()))
    }

    @Test("The log answers for keys invalidated after a mark, and for any key once it forgot")
    func logBounds() throws {
        // A change is recorded twice, when it begins and when it ends.
        let log = InvalidationLog(capacity: 4)
        let a = try CacheKey("a"), b = try CacheKey("b"), c = try CacheKey("c")
        func change(_ keys: [CacheKey]) {
            log.beginChange(keys)
            log.endChange(keys)
        }
        let start = log.mark()
        #expect(!log.wasInvalidated(a, since: start))
        change([a])
        #expect(log.wasInvalidated(a, since: start) && !log.wasInvalidated(b, since: start))
        let afterA = log.mark()
        #expect(!log.wasInvalidated(a, since: afterA))
        change([b, c])  // a is forgotten: capacity 4
        #expect(log.wasInvalidated(c, since: afterA) && !log.wasInvalidated(a, since: afterA))
        #expect(log.wasInvalidated(try CacheKey("z"), since: start))  // older than what is kept
        let afterC = log.mark()
        log.beginChange(nil)
        log.endChange(nil)
        #expect(log.wasInvalidated(a, since: afterC), "a flush names every key")
    }
}

/// A remote tier over a dictionary whose reads (after reading) and changes (before changing) can
/// be held, so that a test can run a change while a lookup is between its read and its
/// promotion, or a lookup while a change is between two tiers.
final class GatedTier: CacheTier {
    let name = "gated"
    let medium = TierMedium.remote
    private let inner = DictionaryTier(name: "gated-inner", medium: .remote, capacity: 1 << 20)
    /// Where reads are held, once they have read.
    let reads = Hold()
    /// Where stores and removals are held, before they change anything.
    let changes = Hold()

    func entry(forKey key: CacheKey) async throws -> CacheEntry? {
        let found = inner.entry(forKey: key)
        await reads.pass()
        return found
    }
    func store(_ entry: CacheEntry, forKey key: CacheKey) async throws -> StoreOutcome {
        await changes.pass()
        return inner.store(entry, forKey: key)
    }
    func removeEntry(forKey key: CacheKey) async throws {
        await changes.pass()
        inner.removeEntry(forKey: key)
    }
    func removeAll() async throws {
        await changes.pass()
        inner.removeAll()
    }
    func usage() async throws -> TierUsage { inner.usage() }
    func statistics() async -> TierStatistics { inner.statistics() }
}

/// Numbers in the order tasks append them.
private actor Record {
    var numbers: [Int] = []
    func append(_ number: Int) { numbers.append(number) }
}

/// A remote tier over a dictionary whose first store can be held (``Hold``), before it changes
/// anything and once it has; later ones pass.
final class FirstStoreHeldTier: CacheTier {
    let name = "first-store-held"
    let medium = TierMedium.remote
    private let inner = DictionaryTier(name: "first-store-held-inner", medium: .remote, capacity: 1 << 20)
    private let stores = Locked(0)
    /// Where the first store is held, before it changes anything.
    let firstStore = Hold()
    /// Where the first store is held once it has stored, before it returns.
    let firstStoreWritten = Hold()

    func entry(forKey key: CacheKey) async throws -> CacheEntry? { inner.entry(forKey: key) }
    func store(_ entry: CacheEntry, forKey key: CacheKey) async throws -> StoreOutcome {
        let isFirst = stores.withLock { count in
            count += 1
            return count == 1
        }
        guard isFirst else { return inner.store(entry, forKey: key) }
        await firstStore.pass()
        let outcome = inner.store(entry, forKey: key)
        await firstStoreWritten.pass()
        return outcome
    }
    func removeEntry(forKey key: CacheKey) async throws { inner.removeEntry(forKey: key) }
    func removeAll() async throws { inner.removeAll() }
    func usage() async throws -> TierUsage { inner.usage() }
    func statistics() async -> TierStatistics { inner.statistics() }
    /// What the tier holds under `key`, read without a tier's call.
    func storedValue(forKey key: CacheKey) -> [UInt8]? { inner.entry(forKey: key)?.value }
}

/// A point where one caller at a time is held while it is closed, until the test opens it.
final class Hold: Sendable {
    private struct State {
        var closed = false
        var held: CheckedContinuation<Void, Never>?
        var waitingForHeld: CheckedContinuation<Void, Never>?
    }
    private let state = Locked(State())

    func close() { state.withLock { $0.closed = true } }

    /// Returns once a caller is held.
    func waitUntilHeld() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if state.held != nil { return true }
                state.waitingForHeld = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Opens the hold and lets the held caller go.
    func open() {
        let held = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.closed = false
            defer { state.held = nil }
            return state.held
        }
        held?.resume()
    }

    /// Where the held operation waits: at once when open.
    func pass() async {
        await withCheckedContinuation { continuation in
            let (hold, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
                guard state.closed else { return (false, nil) }
                state.held = continuation
                defer { state.waitingForHeld = nil }
                return (true, state.waitingForHeld)
            }
            waiter?.resume()
            if !hold { continuation.resume() }
        }
    }
}

/// A remote tier over a dictionary that, when `key` is stored in it, notes what the tier above it
/// (`watched`) holds under that key at that moment.
final class WatchingTier: CacheTier {
    let name = "watching"
    let medium = TierMedium.remote
    private let inner = DictionaryTier(name: "watching-inner", medium: .remote, capacity: 1 << 20)
    private let watched: MemoryTier
    private let key: CacheKey
    private let seen = Locked<[[UInt8]?]>([])
    private let stored = Locked<[[UInt8]]>([])

    init(watched: MemoryTier, key: CacheKey) {
        self.watched = watched
        self.key = key
    }

    /// What `watched` held under `key` at each of its stores here.
    var seenAboveWhenStored: [[UInt8]?] { seen.withLock { $0 } }
    /// The values stored here under `key`.
    var storedValues: [[UInt8]] { stored.withLock { $0 } }

    func entry(forKey key: CacheKey) async throws -> CacheEntry? { inner.entry(forKey: key) }
    func store(_ entry: CacheEntry, forKey key: CacheKey) async throws -> StoreOutcome {
        if key == self.key {
            let above = watched.entry(forKey: key).map { [UInt8]($0.value) }
            seen.withLock { $0.append(above) }
            stored.withLock { $0.append([UInt8](entry.value)) }
        }
        return inner.store(entry, forKey: key)
    }
    func removeEntry(forKey key: CacheKey) async throws { inner.removeEntry(forKey: key) }
    func removeAll() async throws { inner.removeAll() }
    func usage() async throws -> TierUsage { inner.usage() }
    func statistics() async -> TierStatistics { inner.statistics() }
}
