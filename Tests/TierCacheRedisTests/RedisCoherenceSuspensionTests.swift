import Foundation
import Synchronization
import Testing
@_spi(TierCacheInternals) import TierCache

@testable import TierCacheRedis

/// While coherence cannot receive invalidations, the tiers above Redis are skipped: a value
/// promoted or stored there then would be stale, without bound, once another process writes.
@Suite(
    .enabled(if: RedisProcess.cliPath != nil, "redis-server and redis-cli are not installed"), .timeLimit(.minutes(5)))
struct RedisCoherenceSuspensionTests {
    @Test("An ACL that allows commands but not CLIENT TRACKING: Redis answers, nothing is kept above it")
    func trackingRefusedSuspendsUpperTiers() async throws {
        // The user may read and write keys, but not run CLIENT (TRACKING, SETNAME, ID).
        let server = try await RedisProcess(arguments: ["--user", "app", "on", ">apppass", "~*", "+@all", "-client"])
        let endpoint = try RedisEndpoint(url: "redis://app:apppass@127.0.0.1:\(server.port)")
        func redis() throws -> RedisTier {
            try RedisTier(
                configuration: .init(
                    deployment: .standalone(endpoint), keyPrefix: "suspended:", capacity: 1 << 20,
                    commandTimeout: .seconds(5)))
        }
        let memory = try MemoryTier(capacity: 1 << 20)
        let cache = TieredCache(tiers: [memory, try redis()])
        let otherProcess = TieredCache(tiers: [try redis()])
        let events = CoherenceEvents()
        let coherence = try RedisCoherence(cache: cache, configuration: .init(onEvent: events.record))
        let tracking = Task { await coherence.run() }
        #expect(await events.next { if case .trackingLost = $0 { true } else { false } } != nil)
        #expect(cache.suspendedTiers == 1)

        let key = try CacheKey("k")
        let report = await cache.store(CacheEntry(value: [1], storedAt: Date()), forKey: key, policy: .allowed)
        guard case .refused(.suspended) = report.outcomes.first?.outcome, case .stored = report.outcomes.last?.outcome
        else {
            Issue.record("outcomes: \(report.outcomes)")
            return
        }
        #expect(await cache.lookup(key)?.tierIndex == 1, "read from Redis")
        #expect(memory.entry(forKey: key) == nil, "and not promoted")

        // Another process writes; no invalidation can come, and none is needed.
        _ = await otherProcess.store(CacheEntry(value: [2], storedAt: Date()), forKey: key, policy: .allowed)
        #expect(await cache.lookup(key)?.entry.value == [2])

        tracking.cancel()
        await tracking.value
        #expect(cache.suspendedTiers == 1, "still suspended once coherence stops")
        // Coherence stopping turns the data connections' tracking off: refused by the ACL, which
        // must not fail the reads behind it.
        #expect(await cache.lookup(key)?.tierIndex == 1)
        cache.resumeTiers()
        #expect(await cache.lookup(key)?.tierIndex == 1)
        #expect(memory.entry(forKey: key)?.value == [2], "resumed, the upper tier is used again")
    }

    /// Cancelled while subscribed, `run()` returned with the upper tiers in use and nothing to
    /// keep them coherent: its documentation says they stay suspended.
    @Test("Coherence cancelled while subscribed leaves the upper tiers suspended")
    func cancellationWhileSubscribedSuspends() async throws {
        let server = try await RedisProcess()
        let redis = try RedisTier(
            configuration: .init(
                deployment: .standalone(RedisEndpoint(host: "127.0.0.1", port: server.port)),
                keyPrefix: "cancelled:", capacity: 1 << 20))
        let cache = TieredCache(tiers: [try MemoryTier(capacity: 1 << 20), redis])
        let events = CoherenceEvents()
        let coherence = try RedisCoherence(cache: cache, configuration: .init(onEvent: events.record))
        let tracking = Task { await coherence.run() }
        #expect(await events.next { if case .subscribed = $0 { true } else { false } } != nil)
        #expect(cache.suspendedTiers == 0, "subscribed: in use")
        tracking.cancel()
        await tracking.value
        #expect(cache.suspendedTiers == 1)
    }

    @Test("Upper tiers that cannot be emptied stay suspended until a flush empties them")
    func failedFlushKeepsTiersSuspended() async throws {
        let server = try await RedisProcess()
        let upper = try UnemptiableTier()
        let (cache, otherProcess) = try Self.caches(over: server, below: upper)
        let key = try CacheKey("k")
        _ = try await upper.store(CacheEntry(value: [1], storedAt: Date()), forKey: key)  // from the last run
        upper.refusesToEmpty.store(true, ordering: .relaxed)
        let events = CoherenceEvents()
        let coherence = try RedisCoherence(
            cache: cache,
            configuration: .init(
                reconnectDelay: .milliseconds(10), maximumReconnectDelay: .milliseconds(50), onEvent: events.record))
        let tracking = Task { await coherence.run() }
        let first = await events.next {
            switch $0 {
            case .subscribed, .trackingLost: true
            default: false
            }
        }
        guard case .trackingLost(let reason)? = first else {
            Issue.record("the first event is \(String(describing: first)), not a loss")
            tracking.cancel()
            return
        }
        #expect(reason.contains("could not be emptied"), "\(reason)")
        #expect(cache.suspendedTiers == 1)
        _ = await otherProcess.store(CacheEntry(value: [2], storedAt: Date()), forKey: key, policy: .allowed)
        #expect(await cache.lookup(key)?.entry.value == [2], "Redis answers, not the stale tier above it")

        upper.refusesToEmpty.store(false, ordering: .relaxed)
        #expect(await events.next { if case .subscribed = $0 { true } else { false } } != nil)
        #expect(cache.suspendedTiers == 0)
        #expect(upper.memory.entry(forKey: key) == nil, "emptied before it is used")

        // Subscribed, a FLUSHALL asks for a flush the tier cannot do: suspended, then resubscribed.
        #expect(await cache.lookup(key)?.entry.value == [2])
        #expect(upper.memory.entry(forKey: key)?.value == [2], "promoted while in use")
        upper.refusesToEmpty.store(true, ordering: .relaxed)
        let endpoint = RedisEndpoint(host: "127.0.0.1", port: server.port)
        _ = try RedisCLI(seeds: [endpoint]).run(endpoint, "FLUSHALL")
        let lost = await events.next { if case .trackingLost = $0 { true } else { false } }
        #expect(lost == .trackingLost(reason: "the upper tiers could not be emptied"))
        #expect(cache.suspendedTiers == 1, "what could not be emptied is not served")
        #expect(await cache.lookup(key) == nil, "Redis was flushed")
        upper.refusesToEmpty.store(false, ordering: .relaxed)
        #expect(await events.next { if case .subscribed = $0 { true } else { false } } != nil)
        #expect(cache.suspendedTiers == 0 && upper.memory.entry(forKey: key) == nil)
        tracking.cancel()
        await tracking.value
    }
}

extension RedisCoherenceSuspensionTests {
    /// A cache of `upper` over `server`, and another process's cache of the same Redis alone.
    /// Keys-read tracking redirects the data connections to the tracking connection before the
    /// first flush; when the flush fails that connection closes, and a data connection still
    /// redirected to it had every command refused until the next subscription.
    @Test("Keys-read tracking whose first flush fails leaves no data connection redirected: Redis answers")
    func failedFirstFlushInKeysReadMode() async throws {
        let server = try await RedisProcess()
        let upper = try UnemptiableTier()
        let (cache, otherProcess) = try Self.caches(over: server, below: upper)
        let key = try CacheKey("k")
        _ = try await upper.store(CacheEntry(value: [1], storedAt: Date()), forKey: key)
        upper.refusesToEmpty.store(true, ordering: .relaxed)
        let events = CoherenceEvents()
        // Long enough that the lookups below run before the next attempt.
        let coherence = try RedisCoherence(
            cache: cache,
            configuration: .init(
                tracking: .keysRead, reconnectDelay: .seconds(30), maximumReconnectDelay: .seconds(30),
                onEvent: events.record))
        let tracking = Task { await coherence.run() }
        defer { tracking.cancel() }
        let lost = await events.next { if case .trackingLost = $0 { true } else { false } }
        #expect(lost == .trackingLost(reason: "the upper tiers could not be emptied"))
        _ = await otherProcess.store(CacheEntry(value: [2], storedAt: Date()), forKey: key, policy: .allowed)
        for _ in 0..<3 { #expect(await cache.lookup(key)?.entry.value == [2], "Redis answers") }
    }

    static func caches(
        over server: RedisProcess, below upper: any CacheTier
    ) throws -> (cache: TieredCache, otherProcess: TieredCache) {
        // Timeouts for the whole suite at once on two cores: at the default 500 ms a stalled
        // health check's timeout, not the flush's failure, ended a subscription first.
        func redis() throws -> RedisTier {
            try RedisTier(
                configuration: .init(
                    deployment: .standalone(RedisEndpoint(host: "127.0.0.1", port: server.port)),
                    keyPrefix: "upper:", capacity: 1 << 20, connectTimeout: .seconds(5), commandTimeout: .seconds(5)))
        }
        return (TieredCache(tiers: [upper, try redis()]), TieredCache(tiers: [try redis()]))
    }

    @Test("Invalidations past the backlog end the subscription as a loss: flushed, then tracked again")
    func fullBacklogIsALoss() async throws {
        let server = try await RedisProcess()
        let upper = try SlowRemovalTier()
        let (cache, otherProcess) = try Self.caches(over: server, below: upper)
        let events = CoherenceEvents()
        // No health check meanwhile: the loss must come from the push that did not fit.
        let coherence = try RedisCoherence(
            cache: cache,
            configuration: .init(healthCheckInterval: .seconds(3_600), invalidationBacklog: 2, onEvent: events.record))
        let tracking = Task { await coherence.run() }
        defer { tracking.cancel() }
        #expect(await events.next { if case .subscribed = $0 { true } else { false } } != nil)

        upper.close()
        func write(_ number: Int) async throws {
            let key = try CacheKey("k\(number)")
            _ = await otherProcess.store(CacheEntry(value: [1], storedAt: Date()), forKey: key, policy: .allowed)
        }
        try await write(0)
        await upper.waitUntilHeld()  // the first invalidation is being applied, slowly
        for number in 1...3 { try await write(number) }  // two wait in the backlog, the third does not fit
        // The third push closes the tracking connection, once it arrives: the server then lists
        // no tracking client (no other is made while the first invalidation is held).
        let deadline = ContinuousClock.now + .seconds(60)
        while try await RedisCLI(seeds: []).polledTool(["-p", "\(server.port)", "CLIENT", "LIST"]).contains(
            "name=tiercache-tracking")
        {
            guard ContinuousClock.now < deadline else {
                Issue.record("the tracking connection stayed open with its backlog full")
                upper.open()
                return
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        upper.open()
        let lost = await events.next { if case .trackingLost = $0 { true } else { false } }
        guard case .trackingLost(let reason)? = lost else {
            Issue.record("no loss")
            return
        }
        #expect(reason.contains("the tracking connection closed"), "\(reason)")
        #expect(await events.next { if case .subscribed = $0 { true } else { false } } != nil, "tracked again")
        #expect(coherence.statistics.trackingLosses == 1 && coherence.statistics.flushes >= 2)
    }

    /// The task group of a subscription waits for every task in it: the tasks applying queued
    /// invalidations kept the upper tiers in use, with nothing reporting newer writes, until all
    /// of them were applied (up to the backlog, 65,536 removals).
    @Test("A lost subscription suspends the upper tiers at once, not after the invalidations still queued")
    func lossSuspendsBeforeTheBacklog() async throws {
        let server = try await RedisProcess()
        let upper = try SlowRemovalTier()
        let (cache, otherProcess) = try Self.caches(over: server, below: upper)
        let events = CoherenceEvents()
        let coherence = try RedisCoherence(
            cache: cache,
            configuration: .init(
                healthCheckInterval: .milliseconds(100), reconnectDelay: .seconds(30),
                maximumReconnectDelay: .seconds(30), onEvent: events.record))
        let tracking = Task { await coherence.run() }
        defer {
            upper.open()
            tracking.cancel()
        }
        #expect(await events.next { if case .subscribed = $0 { true } else { false } } != nil)
        #expect(cache.suspendedTiers == 0)

        upper.close()
        for number in 0..<20 {
            let key = try CacheKey("k\(number)")
            _ = await otherProcess.store(CacheEntry(value: [1], storedAt: Date()), forKey: key, policy: .allowed)
            if number == 0 { await upper.waitUntilHeld() }  // the first invalidation waits; the rest queue
        }
        let cli = RedisCLI(seeds: [])
        let clients = try cli.runTool(["-p", "\(server.port)", "CLIENT", "LIST"])
        let trackingID = try #require(
            clients.split(whereSeparator: \.isNewline).first { $0.contains("name=tiercache-tracking") }?
                .split(separator: " ").first { $0.hasPrefix("id=") }?.dropFirst(3))
        _ = try cli.runTool(["-p", "\(server.port)", "CLIENT", "KILL", "ID", String(trackingID)])
        // The health check finds the connection gone while the first invalidation is still held.
        let deadline = ContinuousClock.now + .seconds(60)
        while cache.suspendedTiers == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(cache.suspendedTiers == 1, "suspended with the invalidations still queued")
    }

    @Test("A backlog of no messages is refused")
    func emptyBacklogIsRefused() throws {
        let cache = TieredCache(tiers: [
            try RedisTier(
                configuration: .init(
                    deployment: .standalone(RedisEndpoint(host: "127.0.0.1", port: 1)), capacity: 1 << 20))
        ])
        #expect(throws: TierCacheError.self) {
            try RedisCoherence(cache: cache, configuration: .init(invalidationBacklog: 0))
        }
    }
}

/// A memory tier whose removals wait, while it is closed, until the test opens it: invalidations
/// applied that slowly let the ones behind them pile up.
final class SlowRemovalTier: CacheTier {
    private struct Gate {
        var closed = false
        var waiting: [CheckedContinuation<Void, Never>] = []
        var heldSignal: CheckedContinuation<Void, Never>?
    }
    let memory: MemoryTier
    private let gate = Locked(Gate())
    var name: String { "slow removal" }
    var medium: TierMedium { .memory }

    init() throws { memory = try MemoryTier(capacity: 1 << 20) }

    func close() { gate.withLock { $0.closed = true } }

    /// Returns once a removal waits at the closed gate.
    func waitUntilHeld() async {
        await withCheckedContinuation { continuation in
            let held = gate.withLock { gate -> Bool in
                if !gate.waiting.isEmpty { return true }
                gate.heldSignal = continuation
                return false
            }
            if held { continuation.resume() }
        }
    }

    func open() {
        let waiting = gate.withLock { gate in
            gate.closed = false
            defer { gate.waiting = [] }
            return gate.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    func entry(forKey key: CacheKey) async throws -> CacheEntry? { memory.entry(forKey: key) }
    func store(_ entry: CacheEntry, forKey key: CacheKey) async throws -> StoreOutcome {
        memory.store(entry, forKey: key)
    }
    func removeEntry(forKey key: CacheKey) async throws {
        await withCheckedContinuation { continuation in
            let (passes, signal) = gate.withLock { gate -> (Bool, CheckedContinuation<Void, Never>?) in
                guard gate.closed else { return (true, nil) }
                gate.waiting.append(continuation)
                defer { gate.heldSignal = nil }
                return (false, gate.heldSignal)
            }
            signal?.resume()
            if passes { continuation.resume() }
        }
        memory.removeEntry(forKey: key)
    }
    func removeAll() async throws { memory.removeAll() }
    func usage() async throws -> TierUsage { memory.usage() }
    func statistics() async -> TierStatistics { await memory.statistics() }
}

/// A memory tier whose `removeAll` fails while told to, as a disk tier's may (a full disk,
/// another process holding the store).
final class UnemptiableTier: CacheTier {
    let memory: MemoryTier
    let refusesToEmpty = Atomic<Bool>(false)
    var name: String { "unemptiable" }
    var medium: TierMedium { .memory }

    init() throws { memory = try MemoryTier(capacity: 1 << 20) }

    func entry(forKey key: CacheKey) async throws -> CacheEntry? { memory.entry(forKey: key) }
    func store(_ entry: CacheEntry, forKey key: CacheKey) async throws -> StoreOutcome {
        memory.store(entry, forKey: key)
    }
    func removeEntry(forKey key: CacheKey) async throws { memory.removeEntry(forKey: key) }
    func removeAll() async throws {
        if refusesToEmpty.load(ordering: .relaxed) { throw TierCacheError(.storageFailure, "the store is busy") }
        memory.removeAll()
    }
    func usage() async throws -> TierUsage { memory.usage() }
    func statistics() async -> TierStatistics { await memory.statistics() }
}
