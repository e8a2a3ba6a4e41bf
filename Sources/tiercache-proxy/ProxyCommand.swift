import ArgumentParser
import Foundation
import HTTPCaching
import HTTPCachingAsyncHTTPClient
import Logging
import Metrics
import Prometheus
import ServiceLifecycle
import TierCache
import TierCacheLMDB
import TierCacheProxy
import TierCacheRedis

/// `tiercache-proxy` (also run as `tiercache proxy`): a caching reverse proxy in front of one origin.
@main
struct ProxyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tiercache-proxy",
        abstract: "A caching reverse proxy (RFC 9111 shared cache) in front of one origin server.",
        discussion: """
            Tiers are consulted in the order memory, disk, Redis. Every response carries Cache-Status \
            (RFC 9211) and Via; the proxy forwards only to --upstream. SIGTERM or SIGINT stops \
            accepting connections and lets requests in flight finish.
            """)

    @Option(help: "The address to listen on, HOST:PORT (port 0 picks a free one).")
    var listen = "127.0.0.1:8080"

    @Option(help: "The origin, http://HOST[:PORT][/PREFIX].")
    var upstream: String

    @Option(help: "Memory tier capacity (0 for none).", transform: ByteCount.init(parsing:))
    var memory = ByteCount(bytes: 256 << 20)

    @Option(help: "Directory of an LMDB disk tier (none by default).")
    var disk: String?

    @Option(
        help: "Capacity of the disk tier (2 GiB by default); it refuses entries over 5% of it.",
        transform: ByteCount.init(parsing:))
    var diskCapacity: ByteCount?

    @Option(help: "A Redis tier: redis://[user:password@]HOST[:PORT][/DB].")
    var redis: String?

    @Flag(help: "Treat --redis as a seed node of a Redis Cluster.")
    var redisCluster = false

    @Option(
        help: "Capacity of the Redis tier's share of the server (1 GiB by default).",
        transform: ByteCount.init(parsing:))
    var redisCapacity: ByteCount?

    @Flag(
        help:
            "Keep the memory and disk tiers coherent with --redis (Redis CLIENT TRACKING): a response another proxy stores, replaces or purges in Redis is dropped here at once. One more connection per Redis primary."
    )
    var coherent = false

    @Option(
        name: .customLong("storage-policy"),
        help: "SCHEME=POLICY, with POLICY allowed, allowedInMemoryOnly or notAllowed (repeatable).")
    var storagePolicies: [String] = []

    @Flag(
        help:
            "Run as a private cache for one user only (stores 'private' and authorized responses, ignores s-maxage): never where several users reach the proxy."
    )
    var `private` = false

    @Option(
        help:
            "What the shared cache does with a response that sets a cookie: not-stored (the default: one visitor's cookie must not reach the next, as nginx and Varnish decide), stored-without-cookie, or stored (RFC 9111's letter). A private cache stores them."
    )
    var setCookie: SetCookieArgument = .notStored

    enum SetCookieArgument: String, ExpressibleByArgument {
        case notStored = "not-stored"
        case storedWithoutCookie = "stored-without-cookie"
        case stored

        var choice: HTTPCache.SetCookieInSharedCache {
            switch self {
            case .notStored: .responseNotStored
            case .storedWithoutCookie: .storedWithoutCookie
            case .stored: .stored
            }
        }
    }

    @Option(
        help:
            "The targeted cache-control field (RFC 9213) obeyed instead of Cache-Control (default: CDN-Cache-Control, except with --private)."
    )
    var targetedCacheControl: String?

    @Flag(
        help:
            "Send HEAD requests to the origin as HEAD (by default a HEAD miss fetches the GET, as nginx does); HEAD responses are then kept for later HEADs and update stored GET responses (RFC 9111 §4.3.5)."
    )
    var forwardHead = false

    @Flag(help: "Obey Cache-Control alone: no targeted cache-control field (CDN-Cache-Control is obeyed by default).")
    var noTargetedCacheControl = false

    @Flag(
        help:
            "Forward clients' Forwarded, X-Forwarded-*, X-HTTP-Method-Override and similar fields (removed by default: they can poison cached responses). Only behind a proxy that sets them. Kept, a method override bypasses the cache and responses vary on the host and scheme fields."
    )
    var forwardClientRoutingFields = false

    @Flag(
        help:
            "Answer a request carrying TierCache-Debug-Key with its cache key in Cache-Status (off by default: the key names the upstream). Only where just operators reach the proxy."
    )
    var exposeCacheKeys = false

    @Option(
        help:
            "Largest response body offered to the cache (default: the largest entry a tier accepts, at most 64MiB); larger ones stream through.",
        transform: ByteCount.init(parsing:))
    var maxCacheableBody: ByteCount?

    @Option(help: "Largest request body forwarded (413 beyond).", transform: ByteCount.init(parsing:))
    var maxRequestBody = ByteCount(bytes: 16 << 20)

    @Option(help: "Largest request header section (431 beyond).", transform: ByteCount.init(parsing:))
    var maxRequestHeader = ByteCount(bytes: 32 << 10)

    @Option(help: "Seconds the origin has to answer (504 beyond); more than 0, at most 86400.")
    var upstreamTimeout: Double = 30

    @Option(help: "Most client connections open at once; more wait in the listen backlog.")
    var maxConnections = 4096

    @Option(
        help:
            "Most bytes of answer bodies being sent to clients, all together (503 with Retry-After beyond).",
        transform: ByteCount.init(parsing:))
    var maxAnswerMemory = ByteCount(bytes: 1 << 30)

    @Option(help: "Seconds requests in flight get to finish after SIGTERM or SIGINT; at most 86400.")
    var shutdownTimeout: Double = 30

    @Option(help: "Serve Prometheus metrics on HOST:PORT at /metrics (port 0 picks a free one).")
    var metrics: String?

    @Option(
        help:
            "A file holding the bearer token PURGE requests must carry; PURGE is then answered by the proxy (purge a URL, or tags with Purge-Tags). Off by default. A file, not an argument, so the token stays out of process listings."
    )
    var purgeTokenFile: String?

    @Option(help: "trace, debug, info (request lines), notice, warning, error or critical.")
    var logLevel = "info"

    mutating func run() async throws {
        // Checked before anything is opened or created. A day bounds it well inside the
        // nanoseconds NIO counts in (an Int64), which 1e10 seconds would overflow.
        guard upstreamTimeout > 0, upstreamTimeout <= 86_400 else {
            throw ValidationError("--upstream-timeout must be more than 0 and at most 86400 seconds (a day)")
        }
        guard shutdownTimeout >= 0, shutdownTimeout <= 86_400 else {
            throw ValidationError("--shutdown-timeout must be from 0 to 86400 seconds (a day)")
        }
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("unknown log level '\(logLevel)'")
        }
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "tiercache.proxy")
        let (host, port) = try Self.address(listen)
        let registry = PrometheusCollectorRegistry()
        if metrics != nil { MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry)) }

        // After the metrics bootstrap: tiers, the tiered cache and the engine record through the
        // factory installed when they are created, and /metrics shows them with no code here.
        let (tiers, capacities, largestEntry) = try makeTiers(logger: logger)
        guard !tiers.isEmpty else { throw ValidationError("no tiers: give --memory, --disk or --redis") }
        var cacheConfiguration = HTTPCache.Configuration(
            mode: self.private ? .private : .shared, isConnectivityError: HTTPCache.isAsyncHTTPClientConnectivityError)
        cacheConfiguration.logger = logger
        cacheConfiguration.setCookieInSharedCache = setCookie.choice
        cacheConfiguration.storagePolicies = try storagePolicyTable()

        guard !(noTargetedCacheControl && targetedCacheControl != nil) else {
            throw ValidationError("--targeted-cache-control and --no-targeted-cache-control contradict each other")
        }
        // A private cache is not the CDN a targeted field addresses, unless the field is named.
        let targetedField =
            noTargetedCacheControl
            ? nil : targetedCacheControl ?? (self.private ? nil : TargetedCacheControl.cdnCacheControl)
        let configuration = CachingProxy.Configuration(
            upstream: try CachingProxy.Upstream(upstream), host: host, port: port,
            maximumRequestHeaderBytes: maxRequestHeader.bytes, maximumRequestBodyBytes: maxRequestBody.bytes,
            maximumCacheableBodyBytes: maxCacheableBody?.bytes ?? max(1, min(largestEntry, 64 << 20)),
            upstreamTimeout: .nanoseconds(Int64(upstreamTimeout * 1e9)), targetedCacheControl: targetedField,
            forwardsClientRoutingFields: forwardClientRoutingFields, convertsHEADToGET: !forwardHead,
            servesSingleUser: self.private, purgeToken: try purgeToken(), exposesCacheKeys: exposeCacheKeys,
            maximumConnections: maxConnections, maximumAnswerBytesInFlight: maxAnswerMemory.bytes,
            shutdownTimeout: .nanoseconds(Int64(shutdownTimeout * 1e9)))
        let storage = TieredCache(tiers: tiers, logger: logger)
        let coherence = try makeCoherence(of: storage, logger: logger)
        let proxy = try CachingProxy(
            configuration: configuration, storage: storage, cacheConfiguration: cacheConfiguration, logger: logger)
        let summary =
            await proxy.summary(tierCapacities: capacities) + (coherence == nil ? "" : ", coherent with Redis")
        // The metrics endpoint reports its port through this stream; it finishes without one when
        // the group stops first (the endpoint could not bind), and then no summary is printed.
        let (metricsListening, metricsListeningSink) = AsyncStream.makeStream(of: Int?.self)
        var services: [any Service] = []
        if let metrics {
            let (metricsHost, metricsPort) = try Self.address(metrics)
            let endpoint = try MetricsEndpoint(host: metricsHost, port: metricsPort, registry: registry, logger: logger)
                .makeServer { port in
                    metricsListeningSink.yield(port)
                }
            services.append(NamedEndpoint(option: "--metrics", address: metrics, server: endpoint))
        } else {
            metricsListeningSink.yield(nil)
        }
        let proxyEndpoint = try proxy.makeServer { port in
            // The one line a person (or a test) waits for: the configuration and the bound
            // ports, printed only once every endpoint accepts connections.
            var iterator = metricsListening.makeAsyncIterator()
            guard let metricsPort = await iterator.next() else { return }
            let metricsNote = metricsPort.map { ", metrics on port \($0)" } ?? ""
            FileHandle.standardOutput.write(Data("\(summary) (listening on port \(port)\(metricsNote))\n".utf8))
        }
        services.append(NamedEndpoint(option: "--listen", address: listen, server: proxyEndpoint))
        if let coherence { services.append(CoherenceService(coherence: coherence)) }
        let group = ServiceGroup(configuration: proxy.serviceGroupConfiguration(services))
        do {
            try await group.run()
        } catch {
            try? await proxy.shutdown()
            throw error
        }
        try await proxy.shutdown()
    }

    /// The token in `--purge-token-file`, without surrounding whitespace.
    private func purgeToken() throws -> String? {
        guard let purgeTokenFile else { return nil }
        let contents: String
        do { contents = try String(contentsOfFile: purgeTokenFile, encoding: .utf8) } catch {
            throw ValidationError("--purge-token-file \(purgeTokenFile) cannot be read: \(error.localizedDescription)")
        }
        return contents.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The coherence `--coherent` asks for, over `storage`'s Redis tier.
    private func makeCoherence(of storage: TieredCache, logger: Logger) throws -> RedisCoherence? {
        guard coherent else { return nil }
        guard redis != nil else { throw ValidationError("--coherent keeps tiers coherent with --redis: give it") }
        guard storage.tiers.count > 1 else {
            throw ValidationError("--coherent needs a memory or disk tier above --redis")
        }
        return try RedisCoherence(cache: storage, configuration: .init(logger: logger))
    }

    /// The tiers the options name, their capacities and the largest entry any of them accepts
    /// (from their configurations: asking a Redis tier's usage reads every key on the server, and
    /// a server down at startup made the largest cacheable body 1 byte for the life of the process).
    private func makeTiers(logger: Logger) throws -> (tiers: [any CacheTier], capacities: [Int], largestEntry: Int) {
        // Options for a tier not asked for were accepted and ignored.
        if disk == nil, diskCapacity != nil {
            throw ValidationError("--disk-capacity sizes the --disk tier: give --disk")
        }
        if redis == nil, redisCapacity != nil || redisCluster {
            throw ValidationError("--redis-capacity and --redis-cluster set the --redis tier: give --redis")
        }
        var tiers: [any CacheTier] = []
        var capacities: [Int] = []
        var largestEntry = 0
        func note(capacity: Int, entryFraction fraction: Double) throws {
            capacities.append(capacity)
            largestEntry = max(largestEntry, try EntrySizeLimit(fraction: fraction, capacity: capacity).maxBytes)
        }
        if memory.bytes > 0 {
            let configuration = MemoryTier.Configuration(capacity: memory.bytes, logger: logger)
            tiers.append(try MemoryTier(configuration))
            try note(capacity: configuration.capacity, entryFraction: configuration.maxEntryFraction)
        }
        if let disk {
            let configuration = LMDBTier.Configuration(
                capacity: (diskCapacity ?? Self.defaultDiskCapacity).bytes, logger: logger)
            tiers.append(try LMDBTier(directory: URL(fileURLWithPath: disk), configuration: configuration))
            try note(capacity: configuration.capacity, entryFraction: configuration.maxEntryFraction)
        }
        if let redis {
            let endpoint = try RedisEndpoint(url: redis)
            let deployment: RedisTier.Configuration.Deployment =
                redisCluster ? .cluster(seeds: [endpoint]) : .standalone(endpoint)
            let configuration = RedisTier.Configuration(
                deployment: deployment, capacity: (redisCapacity ?? Self.defaultRedisCapacity).bytes, logger: logger)
            tiers.append(try RedisTier(configuration: configuration))
            try note(capacity: configuration.capacity, entryFraction: configuration.maxEntryFraction)
        }
        return (tiers, capacities, largestEntry)
    }

    static let defaultDiskCapacity = ByteCount(bytes: 2 << 30)
    static let defaultRedisCapacity = ByteCount(bytes: 1 << 30)

    private func storagePolicyTable() throws -> StoragePolicyTable {
        var table = StoragePolicyTable(["https": .allowed, "http": .allowed], default: .notAllowed)
        for entry in storagePolicies {
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            // A scheme as RFC 3986 §3.1 spells it: `https =allowed` named a scheme no URL has.
            guard parts.count == 2, let first = parts[0].first, first.isASCII, first.isLetter,
                parts[0].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }),
                let policy = StoragePolicy(rawValue: parts[1])
            else {
                throw ValidationError(
                    "--storage-policy takes SCHEME=POLICY, SCHEME a URL scheme (a letter, then letters, digits, '+', '-' or '.') and POLICY one of \(StoragePolicy.allCases.map(\.rawValue).joined(separator: ", ")); got '\(entry)'"
                )
            }
            table[parts[0]] = policy
        }
        return table
    }

    /// `HOST:PORT` (`[::1]:PORT` for IPv6).
    static func address(_ text: String) throws -> (String, Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else {
            throw ValidationError("'\(text)' is not HOST:PORT")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw ValidationError("'\(text)' has no host") }
        return (host, port)
    }
}
