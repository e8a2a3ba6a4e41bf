import CoreMetrics
import Logging
import NIOCore
import Synchronization
@_spi(TierCacheInternals) import TierCache

/// Keeps the tiers above a ``RedisTier`` (memory, disk) coherent with Redis, in every process
/// that runs one: when any process writes or deletes a key, or Redis expires or evicts it, the
/// key is removed from this process's upper tiers.
///
/// It uses Redis's server-assisted client-side caching (`CLIENT TRACKING`, Redis 6 and later):
/// one connection per primary speaks RESP3 and receives the invalidations, and each key named is
/// removed from the upper tiers with `TieredCache.invalidate(_:above:)`. Which keys the server
/// names is ``Configuration/tracking``: in ``Configuration/TrackingMode/broadcast`` mode (the
/// default, `BCAST PREFIX`) every key that changes under the tier's prefix, whoever changed it; in
/// ``Configuration/TrackingMode/keysRead`` mode only the keys this process read, the data
/// connections redirecting their tracking to that connection.
///
/// What it cannot be told about, it does not trust:
/// - When a tracking connection is lost (a network failure, a Redis restart, a cluster failover)
///   or never answers its health check, invalidations may have been missed: with
///   ``Configuration/AfterLoss/flushUpperTiers`` (the default) the upper tiers are emptied, and
///   emptied again once tracking is back.
/// - What the upper tiers held before tracking began (a disk tier kept from the last run) is
///   emptied at the first subscription, under the same setting.
/// - Under that setting, while no invalidation can be received (before the first subscription,
///   after a loss, and after ``run()`` returns) the upper tiers are suspended
///   (`TieredCache.suspendTiers(above:)`): lookups answer from Redis, and nothing is stored
///   above it that no invalidation would reach.
/// - A malformed push, a push of an unknown kind, a `FLUSHALL`, or a key that is not one of the
///   tier's empties the upper tiers, and is counted.
/// - In a cluster, each health check reads the slot map (`CLUSTER SLOTS`): when two checks in a
///   row find the primaries changed (a failover, a node given slots), the upper tiers are emptied
///   and every primary is tracked anew. A node is a primary in that map from its first slot on: a
///   key read from it by `ASK` while that first slot migrates is tracked by no one until then.
/// - Under ``Configuration/AfterLoss/flushUpperTiers``, upper tiers that could not be emptied
///   (a disk tier's `removeAll` failed) are suspended, and the subscription ends as a loss: they
///   are used again only once a flush has emptied them.
///
/// Cost: one more connection per primary, and invalidation messages: in broadcast mode one per
/// write under the prefix to every process, in keys-read mode one per write to each process that
/// read the key since it last changed. The writer is one of them: its own upper tiers drop the
/// key it wrote, and its next read promotes it again.
///
/// Run it for as long as the cache is used, in a task of its own:
///
/// ```swift
/// let coherence = try RedisCoherence(cache: cache)
/// let tracking = Task { await coherence.run() }
/// // …
/// tracking.cancel()
/// ```
public final class RedisCoherence: Sendable {
    /// How coherence reacts to what it cannot know.
    public struct Configuration: Sendable {
        /// Which keys the server reports.
        public enum TrackingMode: Sendable, Equatable {
            /// Every key written under the tier's prefix, whoever wrote it (`BCAST PREFIX`; the
            /// default). The server keeps no state per key; every process hears of every write.
            case broadcast
            /// Only the keys this process read from Redis since they last changed (the server's
            /// default tracking mode, `CLIENT TRACKING ON REDIRECT` on every data connection).
            /// A process hears of the writes to what it holds, not of the whole fleet's writes:
            /// less traffic where each process uses a small part of a large key space. Costs:
            /// the server remembers each key read per process (`tracking-table-max-keys` bounds
            /// that table; a key dropped from it is reported as invalidated), and every write
            /// sends an `EXISTS` of its key first, in the same round trip, since the server does
            /// not track a key a process wrote but never read. Only for processes whose tiers
            /// above Redis are their own: with a disk store shared by several processes, one
            /// process's value reaches another's memory through the shared store, unread from
            /// Redis, so no write to it is reported to that process. Use ``broadcast`` there.
            case keysRead
        }

        /// `.broadcast` by default.
        public var tracking: TrackingMode
        /// What happens to the upper tiers when invalidations may have been missed.
        public enum AfterLoss: Sendable, Equatable {
            /// Empty them when tracking is lost and again when it is back (the default): nothing
            /// stale is served, at the price of cold upper tiers after a failure.
            case flushUpperTiers
            /// Keep them: entries written before the loss may be served stale until they expire
            /// or are overwritten. For data whose expiry already bounds staleness acceptably.
            case keepUpperTiers
        }

        /// `.flushUpperTiers` by default.
        public var afterLoss: AfterLoss
        /// How often each tracking connection is checked (`PING`): a connection that does not
        /// answer within the tier's command timeout counts as lost. 1 second by default; must be
        /// positive.
        public var healthCheckInterval: Duration
        /// The wait before subscribing again after a loss; doubled after each failed attempt, up
        /// to ``maximumReconnectDelay``. 50 milliseconds by default; must be positive.
        public var reconnectDelay: Duration
        /// 5 seconds by default; must be positive.
        public var maximumReconnectDelay: Duration
        /// The most invalidation messages received and not yet applied, per tracking connection.
        /// Past it the connection is closed, a loss: what the messages named is emptied with the
        /// rest (with ``AfterLoss/flushUpperTiers``), where an unbounded backlog would grow with
        /// the fleet's write rate, and with it how stale the upper tiers are. 65,536 by default;
        /// must be positive.
        public var invalidationBacklog: Int
        /// Where losses, flushes and malformed pushes are logged; `nil` logs nothing.
        public var logger: Logger?
        /// Where the `coherence…` metrics of `MetricLabels` are recorded; `nil` means the
        /// factory the process bootstrapped when the coherence is made.
        public var metricsFactory: (any MetricsFactory)?
        /// Called for every ``Event``, on the task that runs ``RedisCoherence/run()``: for logs,
        /// metrics and tests. Keep it short; invalidations wait for it.
        public var onEvent: (@Sendable (Event) -> Void)?

        /// The defaults above.
        public init(
            tracking: TrackingMode = .broadcast,
            afterLoss: AfterLoss = .flushUpperTiers, healthCheckInterval: Duration = .seconds(1),
            reconnectDelay: Duration = .milliseconds(50), maximumReconnectDelay: Duration = .seconds(5),
            invalidationBacklog: Int = 65_536, logger: Logger? = nil, metricsFactory: (any MetricsFactory)? = nil,
            onEvent: (@Sendable (Event) -> Void)? = nil
        ) {
            self.tracking = tracking
            self.afterLoss = afterLoss
            self.healthCheckInterval = healthCheckInterval
            self.reconnectDelay = reconnectDelay
            self.maximumReconnectDelay = maximumReconnectDelay
            self.invalidationBacklog = invalidationBacklog
            self.logger = logger
            self.metricsFactory = metricsFactory
            self.onEvent = onEvent
        }
    }

    /// What coherence did.
    public enum Event: Sendable, Equatable {
        /// Invalidations from these primaries are being received (with
        /// ``Configuration/AfterLoss/flushUpperTiers``, the upper tiers were emptied and are in
        /// use again).
        case subscribed([RedisEndpoint])
        /// These keys were removed from the upper tiers.
        case invalidated([CacheKey])
        /// The upper tiers were emptied, for this reason.
        case flushed(reason: String)
        /// A tracking connection was lost or could not be made.
        case trackingLost(reason: String)
        /// A push could not be read as an invalidation (counted; the upper tiers are flushed).
        case malformedPush(String)
    }

    /// Counts since the coherence was made.
    public struct Statistics: Sendable, Equatable {
        /// Invalidation messages received.
        public var invalidationMessages = 0
        /// Keys removed from the upper tiers because of them.
        public var invalidatedKeys = 0
        /// Times the upper tiers were emptied.
        public var flushes = 0
        /// Tracking connections lost, or subscriptions that failed.
        public var trackingLosses = 0
        /// Pushes that were not invalidations (malformed, or of an unknown kind).
        public var malformedPushes = 0
    }

    /// The configuration it was made with, its waits at most about 136 years (see ``init(cache:configuration:)``).
    public let configuration: Configuration
    private let cache: TieredCache
    private let tier: RedisTier
    private let tierIndex: Int
    private let counters = Locked(Statistics())
    private let metrics: CoherenceMetrics?
    /// The server's `CLIENT ID` of each tracking connection now open, by primary.
    private let trackingIDs = Locked<[RedisEndpoint: Int64]>([:])
    /// Set when the upper tiers could not be emptied while subscribed (they are suspended then):
    /// the subscription ends, so that they are emptied again before they are used.
    private let flushFailed = Atomic<Bool>(false)

    /// Coherence for `cache`, whose lowest tier must be a ``RedisTier``; nothing happens until
    /// ``run()``. Waits longer than about 136 years are waited that long (effectively forever).
    /// - Throws: `TierCacheError` (`invalidConfiguration`) when the lowest tier is not Redis, the
    ///   health check interval, a reconnect delay or the invalidation backlog is not positive.
    public init(cache: TieredCache, configuration: Configuration = .init()) throws(TierCacheError) {
        guard let tier = cache.tiers.last as? RedisTier else {
            throw TierCacheError(
                .invalidConfiguration, "coherence needs a cache whose lowest tier is a RedisTier")
        }
        // A zero interval or delay would PING or reconnect in a busy loop while Redis stays away;
        // a negative delay would double towards an overflow.
        guard configuration.healthCheckInterval > .zero else {
            throw TierCacheError(.invalidConfiguration, "healthCheckInterval must be positive")
        }
        guard configuration.reconnectDelay > .zero, configuration.maximumReconnectDelay > .zero else {
            throw TierCacheError(.invalidConfiguration, "reconnect delays must be positive")
        }
        guard configuration.invalidationBacklog > 0 else {
            throw TierCacheError(.invalidConfiguration, "invalidationBacklog must be positive")
        }
        self.cache = cache
        self.tier = tier
        self.tierIndex = cache.tiers.count - 1
        // Clamped once here, so that every wait of `run()` is one `Task.sleep` can take.
        var configuration = configuration
        configuration.healthCheckInterval = Self.clampedWait(configuration.healthCheckInterval)
        configuration.reconnectDelay = Self.clampedWait(configuration.reconnectDelay)
        configuration.maximumReconnectDelay = Self.clampedWait(configuration.maximumReconnectDelay)
        self.configuration = configuration
        self.metrics = CoherenceMetrics(configuration.metricsFactory)
    }

    /// The longest wait: `Task.sleep` traps on a deadline past Int64 seconds (`.seconds(Int64.max)`
    /// is one), so longer configured waits are clamped to this, which is forever in practice.
    static let longestWait: Duration = .seconds(1 << 32)

    /// `duration`, at most ``longestWait``.
    static func clampedWait(_ duration: Duration) -> Duration { min(duration, longestWait) }

    /// What it has done so far.
    public var statistics: Statistics { counters.withLock { $0 } }

    /// The server's ids of the tracking connections last opened (for tests that kill one).
    var trackingConnectionIDs: [Int64] { trackingIDs.withLock { Array($0.values) } }

    /// Subscribes to invalidations and applies them until the task is cancelled, subscribing
    /// again after every loss. Returns when cancelled.
    ///
    /// With ``Configuration/AfterLoss/flushUpperTiers`` the upper tiers are used only while
    /// invalidations are received, and stay suspended when this returns: call
    /// `TieredCache.resumeTiers()` to use them without coherence.
    public func run() async {
        if configuration.afterLoss == .flushUpperTiers {
            // A write that did not reach Redis is not kept above it: the fleet reads the value
            // Redis kept (or none), and in keys-read mode nobody would be told of the next write
            // to its key. (`stop()` lets it go when run ends: it holds the cache.)
            let cache = self.cache
            let logger = configuration.logger
            if configuration.tracking == .keysRead {
                // The keys a closed data connection read are no longer tracked by anyone.
                tier.tracking.onRedirectedConnectionClosed {
                    Task { await self.flush(.dataConnectionClosed) }
                }
            }
            tier.tracking.onWriteNotTracked { key in
                do { try cache.removeLocalEntry(forKey: key) } catch {
                    logger?.error(
                        "a write that did not reach Redis could not be removed from the upper tiers",
                        metadata: ["key": "\(key.rawValue)", "error": "\(error)"])
                }
            }
        }
        // Until invalidations are received, nothing above Redis is fed a value no invalidation
        // would reach; lookups answer from Redis. The tiers stay suspended when this returns,
        // however it returns (a cancellation while subscribed left them in use, deaf).
        if configuration.afterLoss == .flushUpperTiers { cache.suspendTiers(above: tierIndex) }
        defer {
            if configuration.afterLoss == .flushUpperTiers { cache.suspendTiers(above: tierIndex) }
            tier.tracking.stop()
        }
        var delay = configuration.reconnectDelay
        // Once per loss: the attempts that fail while Redis stays away find nothing new to drop
        // (what this process stores meanwhile is emptied when tracking is back).
        var flushedSinceSubscribed = false
        var isFirstAttempt = true
        while !Task.isCancelled {
            let ending = await trackUntilLost()
            guard !Task.isCancelled else { return }
            switch ending {
            case .lost(let reason, let wasSubscribed):
                counters.withLock { $0.trackingLosses += 1 }
                metrics?.recordTrackingLoss()
                emit(.trackingLost(reason: reason))
                // Once when tracking goes, then quietly while Redis stays away.
                // The very first attempt's failure is a warning too: a server that refuses tracking
                // (`CLIENT TRACKING` denied, no RESP3, a proxy in between) keeps the upper tiers
                // suspended for good, and only this says why.
                configuration.logger?.log(
                    level: wasSubscribed || isFirstAttempt ? .warning : .debug,
                    "Redis invalidations lost; subscribing again", metadata: ["reason": "\(reason)"])
                isFirstAttempt = false
                if wasSubscribed { flushedSinceSubscribed = false }
                if configuration.afterLoss == .flushUpperTiers, !flushedSinceSubscribed {
                    // Suspended first: what a lookup promotes after the flush would be stale
                    // without bound while subscribing keeps failing.
                    cache.suspendTiers(above: tierIndex)
                    await flush(.trackingLost, detail: reason)
                    flushedSinceSubscribed = true
                }
                delay =
                    wasSubscribed ? configuration.reconnectDelay : min(delay * 2, configuration.maximumReconnectDelay)
            }
            do { try await Task.sleep(for: delay) } catch { return }
        }
    }

    private enum Ending {
        case lost(String, wasSubscribed: Bool)
    }

    /// One subscription to every primary, until one of them is lost or the primaries change.
    private func trackUntilLost() async -> Ending {
        await tier.client.refreshTopology()
        let nodes: [RedisEndpoint]
        do { nodes = try await tier.client.primaries() } catch {
            return .lost("the primaries could not be listed: \(error)", wasSubscribed: false)
        }
        // Subscribed to none, the upper tiers would resume and hear of no write at all.
        guard !nodes.isEmpty else { return .lost("no primary is known", wasSubscribed: false) }
        var subscriptions: [(connection: RedisConnection, pushes: AsyncStream<RESPValue>, id: Int64)] = []
        defer { for subscription in subscriptions { subscription.connection.close() } }
        for node in nodes {
            do {
                subscriptions.append(try await subscribe(to: node))
            } catch {
                return .lost("\(node): \(error)", wasSubscribed: false)
            }
        }
        let ids = Dictionary(zip(nodes, subscriptions.map(\.id)), uniquingKeysWith: { _, last in last })
        trackingIDs.withLock { $0 = ids }
        if configuration.tracking == .keysRead {
            // Before the flush below: a lookup that starts after it reads on a redirected connection.
            tier.tracking.redirect(to: ids)
        }
        // What the upper tiers hold from before now was not covered by these subscriptions.
        if configuration.afterLoss == .flushUpperTiers {
            flushFailed.store(false, ordering: .relaxed)
            // What the flush could not remove may be stale: the tiers stay suspended, and the next
            // attempt flushes again.
            guard await flush(.trackingBegan) else {
                // The subscriptions close on return: data connections redirected to them would
                // have every command refused until the next attempt.
                if configuration.tracking == .keysRead { tier.tracking.suspend() }
                return .lost("the upper tiers could not be emptied", wasSubscribed: false)
            }
            cache.resumeTiers()
        }
        emit(.subscribed(nodes))

        let connections = subscriptions.map(\.connection)
        let streams = subscriptions.map(\.pushes)
        let flushesAfterLoss = configuration.afterLoss == .flushUpperTiers
        return await withTaskGroup(of: Ending.self) { group in
            for (connection, pushes) in zip(connections, streams) {
                group.addTask {
                    for await push in pushes {
                        // Once the subscription is lost (this connection closed, or another, which
                        // cancels this task), the flush replaces what is still queued: applying it
                        // first (up to the backlog's 65,536 removals) kept the tiers in use, deaf to
                        // newer writes, for as long as that took.
                        if flushesAfterLoss, Task.isCancelled || !connection.isActive { break }
                        await self.apply(push)
                        if let ending = self.endingAfterFailedFlush() { return ending }
                    }
                    return .lost("\(connection.endpoint): the tracking connection closed", wasSubscribed: true)
                }
            }
            group.addTask { await self.checkHealth(of: connections, nodes: nodes) }
            let ending = await group.next() ?? .lost("cancelled", wasSubscribed: true)
            // Nothing reports writes any more: suspended now, not once the other subscriptions'
            // tasks have ended (the task group waits for them).
            if flushesAfterLoss { cache.suspendTiers(above: tierIndex) }
            // Data connections redirecting to a closed connection would have their reads refused.
            if configuration.tracking == .keysRead { tier.tracking.suspend() }
            group.cancelAll()
            for connection in connections { connection.close() }
            return ending
        }
    }

    /// A RESP3 connection to `node` that receives the invalidations: of every key under the tier's
    /// prefix (broadcast), or of the keys the data connections redirected to it read.
    private func subscribe(
        to node: RedisEndpoint
    ) async throws(RedisError) -> (connection: RedisConnection, pushes: AsyncStream<RESPValue>, id: Int64) {
        // A push that finds the backlog full closes the connection (RedisCommandHandler): a loss.
        let (pushes, continuation) = AsyncStream.makeStream(
            of: RESPValue.self, bufferingPolicy: .bufferingOldest(configuration.invalidationBacklog))
        let options = tier.connectionOptions
        let connection = try await RedisConnection.connect(
            to: node, on: tier.eventLoopGroup, connectTimeout: options.connectTimeout,
            commandTimeout: options.commandTimeout, tls: options.tls, pushes: continuation)
        do throws(RedisError) {
            // Named, so that `CLIENT LIST` shows what the connection is for.
            try await connection.sendChecked(["CLIENT", "SETNAME", "tiercache-tracking"].map { Array($0.utf8) })
            if configuration.tracking == .broadcast {
                try await connection.sendChecked(
                    ["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX"].map { Array($0.utf8) } + [tier.prefix])
            }
            guard case .integer(let id) = try await connection.sendChecked(["CLIENT", "ID"].map { Array($0.utf8) })
            else { throw RedisError.protocolViolation("CLIENT ID did not answer an integer") }
            return (connection, pushes, id)
        } catch {
            connection.close()
            throw error
        }
    }

    /// Pings every connection each interval, and reads the cluster's map again (one `CLUSTER
    /// SLOTS`): returns when a connection does not answer, or two checks in a row find other
    /// primaries than `nodes`.
    private func checkHealth(of connections: [RedisConnection], nodes: [RedisEndpoint]) async -> Ending {
        // Other primaries than `nodes`, seen at the last check: a change counts once two checks
        // in a row see it, so that one node's stale view during a failover does not flush the
        // upper tiers each time the map is read from it.
        var changed: Set<RedisEndpoint>?
        let tracked = Set(nodes)
        while true {
            do { try await Task.sleep(for: configuration.healthCheckInterval) } catch {
                return .lost("cancelled", wasSubscribed: true)
            }
            // A flush outside the pushes' loop (a data connection closing) may have failed.
            if let ending = endingAfterFailedFlush() { return ending }
            for connection in connections {
                do { try await connection.sendChecked([Array("PING".utf8)]) } catch {
                    return .lost(
                        "\(connection.endpoint) did not answer its health check: \(error)", wasSubscribed: true)
                }
            }
            // Read afresh: the map changes by itself only on an error or a MOVED, and a node that
            // took slots while this process's reads of them came by ASK (or not at all) would
            // never be tracked.
            await tier.client.refreshTopology()
            guard let listed = try? await tier.client.primaries() else { continue }
            let now = Set(listed)
            if now == tracked {
                changed = nil
            } else if now == changed {
                return .lost("the cluster's primaries changed", wasSubscribed: true)
            } else {
                changed = now
            }
        }
    }

    private func apply(_ push: RESPValue) async {
        switch TrackingMessage.decode(push, prefix: tier.prefix) {
        case .success(.invalidate(let keys)):
            counters.withLock {
                $0.invalidationMessages += 1
                $0.invalidatedKeys += keys.count
            }
            metrics?.recordInvalidated(keys.count)
            do {
                try await cache.invalidate(keys, above: tierIndex)
                emit(.invalidated(keys))
            } catch {
                await flush(.invalidationFailed, detail: "\(error)")
            }
        case .success(.invalidateAll(let cause)):
            counters.withLock { $0.invalidationMessages += 1 }
            await flush(cause)
        case .failure(let malformed):
            counters.withLock { $0.malformedPushes += 1 }
            metrics?.recordMalformedPush()
            let detail = "\(malformed)"
            emit(.malformedPush(detail))
            configuration.logger?.error("a tracking push could not be read", metadata: ["push": "\(detail)"])
            await flush(.unreadablePush, detail: detail)
        }
    }

    /// The subscription's end when a flush failed while it ran.
    private func endingAfterFailedFlush() -> Ending? {
        flushFailed.load(ordering: .relaxed)
            ? .lost("the upper tiers could not be emptied", wasSubscribed: true) : nil
    }

    /// Empties the upper tiers; the event's reason is the cause in words, then `detail`. Returns
    /// whether they were emptied. When they were not, under
    /// ``Configuration/AfterLoss/flushUpperTiers`` they are suspended (what is left there may be
    /// stale) and the subscription is to end (``endingAfterFailedFlush()``).
    @discardableResult
    private func flush(_ cause: FlushCause, detail: String? = nil) async -> Bool {
        let reason = detail.map { "\(cause.description): \($0)" } ?? cause.description
        counters.withLock { $0.flushes += 1 }
        metrics?.recordFlush(cause)
        do {
            try await cache.invalidateAll(above: tierIndex)
        } catch {
            configuration.logger?.error(
                "the upper tiers could not be emptied", metadata: ["reason": "\(reason)", "error": "\(error)"])
            if configuration.afterLoss == .flushUpperTiers {
                cache.suspendTiers(above: tierIndex)
                flushFailed.store(true, ordering: .relaxed)
            }
            return false
        }
        emit(.flushed(reason: reason))
        return true
    }

    private func emit(_ event: Event) { configuration.onEvent?(event) }
}
