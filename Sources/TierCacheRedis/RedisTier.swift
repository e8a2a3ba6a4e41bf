import Foundation
import Logging
import NIOCore
import NIOPosix
@_spi(TierCacheInternals) import TierCache
import TierCacheCompression
import TierCacheRecords

/// A `CacheTier` in a shared Redis or Redis Cluster, for fleets whose machines should share the
/// tier below their own memory and disk.
///
/// Values are stored in the same compressed, checksummed record as `LMDBTier`'s (zstd), with a
/// TTL (`SET … PX`) from the entry's expiry hint. A record that fails to decode is a miss, is
/// deleted and is counted. Failures are counted as errors and, by default, turn into misses; a
/// circuit breaker per node makes a dead Redis node cost nothing while it is open.
///
/// ```swift
/// let redis = try RedisTier(configuration: .init(
///     deployment: .standalone(try RedisEndpoint(url: "redis://127.0.0.1:6379")), capacity: 1 << 30))
/// let cache = TieredCache(tiers: [try MemoryTier(capacity: 64 << 20), disk, redis])
/// ```
public final class RedisTier: CacheTier {
    /// The tier's name in statistics and reports.
    public let name: String
    /// Remote: a server shared over the network.
    public var medium: TierMedium { .remote }
    /// The configuration the tier was created with.
    public let configuration: Configuration

    let client: any RedisClient
    let codec: ZstdCodec
    /// The largest record (with its key) the tier stores: `maxEntryFraction` of the capacity,
    /// and never above a bulk string's 512 MiB (``RESPParser/largestBulkString``). Past it, from
    /// a capacity above 10 GiB at 5%, a `SET` made Redis close the connection with every command
    /// queued on it, and, where `proto-max-bulk-len` was raised, every read of the key failed here.
    private let maxEntryBytes: Int
    let counters: TierCounters
    /// Redis going away and coming back is logged once each.
    private let streak = FailureStreak()
    let prefix: [UInt8]
    /// How the tier's connections are made; a coherence subscription's connections too.
    let connectionOptions: RedisConnectionPool.Options
    /// `SCAN MATCH` pattern for this tier's keys: the prefix, glob characters escaped, then `*`.
    private let scanPattern: [UInt8]
    /// The evictions counted since the tier first stored or reported statistics, from each
    /// primary's `evicted_keys`.
    private let evictionTally = Locked(EvictionTally())
    private struct EvictionTally {
        /// Each primary's `evicted_keys` when last asked; nil until first asked.
        var lastSeen: [RedisEndpoint: Int]?
        var counted = 0
        /// Whether a store has asked the servers: once, answered or refused (a store after a
        /// failure to reach them asks again).
        var askedByStore = false
        /// Numbers the askings (``ask()``), and the latest one observed: an answer older than
        /// one already observed is dropped, or two overlapping calls of `statistics()` read a
        /// lower count second and took it for a restart.
        private var asked: UInt64 = 0
        private var observedAsking: UInt64 = 0

        /// A number for an asking about to start.
        mutating func ask() -> UInt64 {
            asked &+= 1
            return asked
        }

        /// Adds what each primary evicted since it was last asked, and returns the total. A count
        /// lower than last time (a restart, `CONFIG RESETSTAT`) is counted from 0; a primary not
        /// seen before (a promoted replica, a node added) from its first answer. (Against one
        /// baseline of the sum, a restart hid the evictions after it until the new count passed
        /// the old one, and a failover swapped a primary's count for its replica's.)
        mutating func observe(_ counts: [RedisEndpoint: Int], asking: UInt64) -> Int {
            guard asking > observedAsking else { return counted }
            observedAsking = asking
            if let lastSeen {
                for (node, count) in counts {
                    guard let previous = lastSeen[node] else { continue }
                    counted = RedisTier.addingSaturating(counted, count >= previous ? count - previous : count)
                }
            }
            lastSeen = counts
            return counted
        }
    }
    /// The group the tier's connections live on (``withEventLoopAffinity(isolation:_:)`` runs on it).
    let eventLoopGroup: any EventLoopGroup
    /// Its event loops, to tell whether a caller already runs on one of them.
    let eventLoops: EventLoopMembership
    /// Where the data connections' reads are tracked, when a ``RedisCoherence`` tracks the keys
    /// this process reads.
    let tracking = TrackingRedirect()

    /// A tier over the deployment in `configuration`; connections open on first use.
    /// Throws `TierCacheError` (`invalidConfiguration`) for impossible settings.
    public init(
        configuration: Configuration, name: String = "redis",
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws(TierCacheError) {
        guard configuration.capacity > 0 else {
            throw TierCacheError(.invalidConfiguration, "a Redis tier's capacity must be positive")
        }
        guard configuration.connectionsPerNode > 0 else {
            throw TierCacheError(.invalidConfiguration, "connectionsPerNode must be at least 1")
        }
        guard configuration.commandTimeout > .zero, configuration.connectTimeout > .zero else {
            throw TierCacheError(.invalidConfiguration, "timeouts must be positive")
        }
        guard configuration.breakerThreshold > 0 else {
            throw TierCacheError(.invalidConfiguration, "breakerThreshold must be at least 1")
        }
        guard configuration.breakerOpenDuration >= .zero else {
            throw TierCacheError(.invalidConfiguration, "breakerOpenDuration must not be negative")
        }
        guard let codec = ZstdCodec(level: configuration.compressionLevel) else {
            throw TierCacheError(.invalidConfiguration, "zstd level \(configuration.compressionLevel) is out of range")
        }
        self.maxEntryBytes = try EntrySizeLimit(
            fraction: configuration.maxEntryFraction, capacity: configuration.capacity,
            ceiling: RESPParser.largestBulkString
        ).maxBytes
        self.name = name
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.eventLoops = EventLoopMembership(eventLoopGroup)
        self.counters = TierCounters(tierName: name, metricsFactory: configuration.metricsFactory)
        self.codec = codec
        self.prefix = Array(configuration.keyPrefix.utf8)
        self.scanPattern =
            Array(configuration.keyPrefix.utf8).flatMap { byte -> [UInt8] in
                Array("*?[]\\".utf8).contains(byte) ? [UInt8(ascii: "\\"), byte] : [byte]
            } + [UInt8(ascii: "*")]
        let tls = try configuration.tlsInForce.map { settings throws(TierCacheError) in
            RedisConnection.TLS(context: try settings.makeContext(), serverName: settings.serverName)
        }
        let options = RedisConnectionPool.Options(
            size: configuration.connectionsPerNode,
            connectTimeout: Self.timeAmount(configuration.connectTimeout),
            commandTimeout: Self.timeAmount(configuration.commandTimeout),
            breaker: .init(
                failureThreshold: configuration.breakerThreshold, openDuration: configuration.breakerOpenDuration),
            tls: tls, tracking: tracking)
        self.connectionOptions = options
        switch configuration.deployment {
        case .standalone(let endpoint):
            client = StandaloneRedisClient(endpoint: endpoint, group: eventLoopGroup, options: options)
        case .cluster(let seeds):
            guard !seeds.isEmpty else {
                throw TierCacheError(.invalidConfiguration, "a cluster needs at least one seed node")
            }
            client = ClusterRedisClient(seeds: seeds, group: eventLoopGroup, options: options)
        }
    }

    deinit { client.close() }

    /// `duration` as NIO's `TimeAmount`, saturating: a `TimeAmount` is Int64 nanoseconds (about 292
    /// years), so a longer timeout becomes the longest one (NIO's deadlines saturate at
    /// `distantFuture` too) instead of overflowing. Compared first: `components` itself traps when
    /// the seconds exceed Int64.
    static func timeAmount(_ duration: Duration) -> TimeAmount {
        if duration >= .nanoseconds(Int64.max) { return .nanoseconds(.max) }
        if duration <= .nanoseconds(Int64.min) { return .nanoseconds(.min) }
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// The longest `PX` TTL sent, 2^53 ms (about 285,000 years): Redis adds its clock to a TTL and
    /// rejects one that overflows ("invalid expire time"), and a Double counts milliseconds exactly
    /// up to here.
    static let longestTTLMilliseconds: Int64 = 1 << 53

    /// The `PX` TTL for an entry expiring at `expiresAt`, from `now`: at least 1 ms, rounded up.
    /// `nil` means stored without a TTL, as an entry with no expiry is: for an expiry beyond
    /// ``longestTTLMilliseconds`` (a date infinitely or absurdly far away), and for NaN, which the
    /// record format reads as no expiry (``store(_:forKey:)`` never gets here with one:
    /// `Metadata.isExpired(at:)` calls a NaN expiry passed). Saturating, as a `Date` holds any
    /// Double and converting to Int64 would trap.
    static func ttlMilliseconds(until expiresAt: Date, now: Date) -> Int64? {
        let milliseconds = (expiresAt.timeIntervalSince(now) * 1000).rounded(.up)
        guard milliseconds < Double(longestTTLMilliseconds) else { return nil }  // NaN fails it too
        return Int64(max(1, milliseconds))
    }

    func redisKey(_ key: CacheKey) -> [UInt8] {
        var bytes = prefix
        bytes.append(contentsOf: key.rawValue.utf8)
        return bytes
    }

    /// Command names, made once.
    static let get = Array("GET".utf8), mget = Array("MGET".utf8), set = Array("SET".utf8), del = Array("DEL".utf8)

    /// Runs a command (through its node's circuit breaker), logging Redis's going away and coming
    /// back.
    func run(
        _ arguments: [[UInt8]], key: [UInt8]?, readingKeyFirst: Bool = false
    ) async throws(RedisError) -> RESPValue {
        try await logging { () throws(RedisError) in
            try await client.send(arguments, key: key, readingKeyFirst: readingKeyFirst)
        }
    }

    /// Runs a read whose records are decoded as they arrive (see ``RedisRecordDecoder``), as
    /// ``run(_:key:readingKeyFirst:)`` runs a command.
    func read(_ arguments: [[UInt8]], key: [UInt8]?) async throws(RedisError) -> RedisRecordsReply {
        try await logging { () throws(RedisError) in try await client.read(arguments, key: key, decoder: self) }
    }

    /// Logs a failure of `command`, and Redis's going away and coming back. A failure is counted
    /// (`TierStatistics.errors`) where the tier answers in its place (a miss in
    /// ``Configuration/FailureMode/degrade``), not where it throws: a `TieredCache` counts the
    /// errors it carries on past, and counted here too each was counted twice.
    private func logging<Reply>(_ command: () async throws(RedisError) -> Reply) async throws(RedisError) -> Reply {
        do {
            let reply = try await command()
            if streak.noteSuccess() {
                configuration.logger?.notice("Redis tier recovered", metadata: ["tier": "\(name)"])
            }
            return reply
        } catch {
            let isFirst = streak.noteFailure()
            if let logger = configuration.logger {
                let metadata: Logger.Metadata = ["tier": "\(name)", "error": "\(error)"]
                if isFirst {
                    logger.warning("Redis tier failing; logged again when it recovers", metadata: metadata)
                } else {
                    logger.debug("Redis tier command failed", metadata: metadata)
                }
            }
            throw error
        }
    }

    func tierError(_ error: RedisError) -> TierCacheError {
        TierCacheError(.storageFailure, "\(name): \(error)")
    }

    /// The entry stored under `key`, or nil. A record that fails to decode is removed and missed;
    /// when Redis fails, the ``Configuration/failureMode`` decides between a miss and an error.
    public func entry(forKey key: CacheKey) async throws -> CacheEntry? {
        try await entry(forKey: key, throwingFailures: configuration.failureMode == .throwErrors)
    }

    /// The entry stored under `key`, or nil when Redis answered that there is none; a failure
    /// throws whatever the ``Configuration/failureMode``.
    public func entryReportingFailures(forKey key: CacheKey) async throws -> CacheEntry? {
        try await entry(forKey: key, throwingFailures: true)
    }

    private func entry(forKey key: CacheKey, throwingFailures: Bool) async throws -> CacheEntry? {
        let timing = counters.startLookup()
        let redisKey = redisKey(key)
        let reply: RedisRecordsReply
        do {
            reply = try await read([Self.get, redisKey], key: redisKey)
        } catch {
            counters.recordLookup(hit: false, timing: timing)
            // Counted here unless the failure mode has the caller count it (a TieredCache does;
            // `entryReportingFailures`'s caller is not one).
            if configuration.failureMode != .throwErrors { counters.recordError() }
            if throwingFailures { throw tierError(error) }
            return nil
        }
        switch reply {
        case .one(let record): return await entry(from: record, key: key, redisKey: redisKey, timing: timing)
        case .value(let value):
            return await entry(from: decodeRecord(value), key: key, redisKey: redisKey, timing: timing)
        case .many:
            counters.recordError()
            return await entry(from: .missing, key: key, redisKey: redisKey, timing: timing)
        }
    }

    /// Stores `entry` under `key`, compressed, with a TTL from its expiry hint; an entry over the
    /// per-entry limit or already expired (a NaN expiry counts as passed) is refused and the key's
    /// older entry removed. An expiry infinitely or more than about 285,000 years away (2^53 ms,
    /// past which Redis refuses a TTL) is stored without a TTL, as an entry without an expiry is.
    public func store(_ entry: CacheEntry, forKey key: CacheKey) async throws -> StoreOutcome {
        let outcome: StoreOutcome
        do {
            outcome = try await storeRecord(entry, forKey: key)
        } catch {
            tracking.writeFailed(key)
            throw error
        }
        if case .refused = outcome { tracking.writeNotTracked(key) }
        return outcome
    }

    private func storeRecord(_ entry: CacheEntry, forKey key: CacheKey) async throws -> StoreOutcome {
        let now = Date()
        if entry.metadata.isExpired(at: now) {
            counters.record(.refused(.alreadyExpired))
            try await removeEntry(forKey: key)
            return .refused(.alreadyExpired)
        }
        // Larger than the whole tier, however well it compresses, is too large.
        guard entry.value.count <= EntryRecord.largestValue(inCapacity: configuration.capacity) else {
            counters.record(.refused(.tooLarge(size: entry.value.count, limit: maxEntryBytes)))
            try await removeEntry(forKey: key)
            return .refused(.tooLarge(size: entry.value.count, limit: maxEntryBytes))
        }
        let record = EntryRecord.encode(entry, fullKey: nil, codec: codec)
        let redisKey = redisKey(key)
        guard record.count + redisKey.count <= maxEntryBytes else {
            let outcome = StoreOutcome.refused(
                .tooLarge(size: record.count + redisKey.count, limit: maxEntryBytes))
            counters.record(outcome)
            try await removeEntry(forKey: key)
            return outcome
        }
        // Asked once: a server that refuses `INFO` (an ACL without `@dangerous`) would otherwise
        // cost every store a round trip to each primary.
        let asksBaseline = evictionTally.withLock { tally in
            defer { tally.askedByStore = true }
            return tally.lastSeen == nil && !tally.askedByStore
        }
        if asksBaseline {
            do throws(RedisError) {
                let asking = evictionTally.withLock { $0.ask() }
                let evicted = try await serverEvictions()
                evictionTally.withLock { if $0.lastSeen == nil { _ = $0.observe(evicted, asking: asking) } }
            } catch .server {
                // Refused (an ACL): asked once, as said above.
            } catch {
                // Not answered (Redis starting, a node away): the next store asks again.
                evictionTally.withLock { $0.askedByStore = false }
            }
        }
        var command: [[UInt8]] = [Self.set, redisKey, record]
        if let expiresAt = entry.metadata.expiresAt, let milliseconds = Self.ttlMilliseconds(until: expiresAt, now: now)
        {
            command += [Array("PX".utf8), Array(String(milliseconds).utf8)]
        }
        do {
            _ = try await run(command, key: redisKey, readingKeyFirst: tracking.tracksWrittenKeys)
        } catch {
            throw tierError(error)
        }
        counters.record(.stored)
        return .stored
    }

    /// Removes the entry stored under `key`, if any.
    public func removeEntry(forKey key: CacheKey) async throws {
        let redisKey = redisKey(key)
        do {
            // Under keys-read coherence the key is read first, as a write's is: a removal here may
            // leave a value in the tiers above (a store those tiers' policy keeps from Redis, a
            // write past a budget), and the server then reports the key's next write to this
            // process.
            _ = try await run([Self.del, redisKey], key: redisKey, readingKeyFirst: tracking.tracksWrittenKeys)
        } catch {
            throw tierError(error)
        }
    }

    /// Deletes every key under the prefix, on every primary (`SCAN` + `UNLINK`), never other keys.
    /// The keys of one `SCAN` page (up to about 1,000) are unlinked at once, pipelined on the
    /// pool's connections: one round trip after another, a store of ten million keys took most
    /// of an hour, its upper tiers' promotions held back all along.
    public func removeAll() async throws {
        do throws(RedisError) {
            try await forEachPage { keys, _ throws(RedisError) in
                let failure = await withTaskGroup(of: RedisError?.self) { group -> RedisError? in
                    for key in keys {
                        group.addTask {
                            do throws(RedisError) {
                                _ = try await self.run([Array("UNLINK".utf8), key], key: key)
                                return nil
                            } catch {
                                return error
                            }
                        }
                    }
                    for await case let failure? in group { return failure }
                    return nil
                }
                if let failure { throw failure }
            }
        } catch {
            throw tierError(error)
        }
    }

    /// Calls `body` with every key under the prefix and the primary holding it (`SCAN MATCH`).
    private func forEachKey(_ body: ([UInt8], RedisEndpoint) async throws(RedisError) -> Void) async throws(RedisError)
    {
        try await forEachPage { keys, node throws(RedisError) in
            for key in keys { try await body(key, node) }
        }
    }

    /// Calls `body` with each page of keys under the prefix (one `SCAN MATCH` reply) and the
    /// primary holding them.
    private func forEachPage(
        _ body: ([[UInt8]], RedisEndpoint) async throws(RedisError) -> Void
    ) async throws(RedisError) {
        for node in try await client.primaries() {
            var cursor: [UInt8] = Array("0".utf8)
            repeat {
                let reply = try await client.send(
                    [
                        Array("SCAN".utf8), cursor, Array("MATCH".utf8), scanPattern, Array("COUNT".utf8),
                        Array("1000".utf8),
                    ], to: node)
                guard case .array(let parts) = reply, parts.count == 2, let next = parts[0].bytes,
                    case .array(let keys) = parts[1]
                else {
                    throw .protocolViolation("SCAN answered something else than [cursor, keys]")
                }
                var page: [[UInt8]] = []
                for case .bulkString(let key) in keys { page.append(key) }
                if !page.isEmpty { try await body(page, node) }
                cursor = next
            } while cursor != Array("0".utf8)
        }
    }

    /// This tier's entries and their stored bytes (key and record), counted under its prefix with
    /// `SCAN` + `STRLEN` on every primary: O(entries), meant for statistics and reports, not for
    /// the request path. The capacity is ``Configuration/capacity``; Redis's own `maxmemory`
    /// enforces it, with the memory Redis adds per key on top of these bytes.
    public func usage() async throws -> TierUsage {
        // While coherence tracks the keys this process reads (keys-read mode), a `STRLEN` of every
        // key on the pooled connections would register each one in the server's tracking table
        // for this process: server memory per key, and the whole fleet's writes to them sent
        // here. The lengths are read on a connection of their own per node, without tracking.
        var untracked: [RedisEndpoint: RedisConnection] = [:]
        defer { for connection in untracked.values { connection.close() } }
        do throws(RedisError) {
            var bytes = 0
            var entries = 0
            try await forEachKey { key, node throws(RedisError) in
                let command = [Array("STRLEN".utf8), key]
                let length: RESPValue
                if tracking.tracksWrittenKeys {
                    let connection: RedisConnection
                    if let open = untracked[node] {
                        connection = open
                    } else {
                        connection = try await RedisConnection.connect(
                            to: node, on: eventLoopGroup, connectTimeout: connectionOptions.connectTimeout,
                            commandTimeout: connectionOptions.commandTimeout, tls: connectionOptions.tls)
                        untracked[node] = connection
                    }
                    length = try await connection.sendChecked(command)
                } else {
                    length = try await client.send(command, to: node)
                }
                if case .integer(let count) = length, count > 0 {
                    entries += 1
                    // Saturating: the length is the server's word, and a broken one must not crash us.
                    bytes = Self.addingSaturating(bytes, Self.addingSaturating(Int(clamping: count), key.count))
                }
            }
            return TierUsage(
                bytes: bytes, entries: entries, capacity: configuration.capacity, maxEntryBytes: maxEntryBytes)
        } catch {
            throw tierError(error)
        }
    }

    /// Keys Redis evicted (`evicted_keys` of `INFO stats`, summed over the primaries) since this
    /// tier's first store. Redis counts per server, not per prefix: exact when the tier has its Redis
    /// to itself, as the TierCacheRedis documentation recommends.
    private func serverEvictions() async throws(RedisError) -> [RedisEndpoint: Int] {
        var counts: [RedisEndpoint: Int] = [:]
        for node in try await client.primaries() {
            let text = try await client.send([Array("INFO".utf8), Array("stats".utf8)], to: node).string ?? ""
            var total = 0
            for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("evicted_keys:") {
                // The server's word: clamped to a count (not negative) and summed saturating,
                // so a broken server cannot crash us here or in the tally's subtraction.
                let count = max(0, Int(line.dropFirst("evicted_keys:".count)) ?? 0)
                total = Self.addingSaturating(total, count)
            }
            counts[node] = total
        }
        return counts
    }

    /// `a + b`, or `Int.max`/`Int.min` where that overflows.
    static func addingSaturating(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }

    /// The counters since the tier was created, with its usage when Redis answers.
    public func statistics() async -> TierStatistics {
        var statistics = counters.snapshot(usage: try? await usage())
        let asking = evictionTally.withLock { $0.ask() }
        if let evicted = try? await serverEvictions() {
            statistics.evictions = evictionTally.withLock { $0.observe(evicted, asking: asking) }
        }
        return statistics
    }

    /// The counters without the usage and eviction queries ``statistics()`` makes.
    public var counterSnapshot: TierStatistics { counters.snapshot(usage: nil) }

    /// Whether the breaker of a node the tier sends commands to is open (it is being skipped after
    /// repeated failures): the server's, or one of a cluster's primaries in the current slot map
    /// (the seeds' until there is one). A primary that failed and was replaced counts no more.
    public var isCircuitOpen: Bool { !client.nodesWithOpenCircuit.isEmpty }
}
