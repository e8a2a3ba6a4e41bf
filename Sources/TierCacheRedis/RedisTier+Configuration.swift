import CoreMetrics
import Logging
import TierCache

extension RedisTier {
    /// How a ``RedisTier`` reaches Redis and what it stores there.
    ///
    /// Capacity is enforced by Redis itself: set the server's `maxmemory` and an eviction policy
    /// (`maxmemory-policy allkeys-lru`; see the TierCacheRedis documentation's server settings). `capacity`
    /// here is the share of that memory this tier may assume, used for the per-entry size rule and
    /// reported as the tier's capacity.
    ///
    /// TLS: set ``tls``, or write the endpoints `rediss://` (see ``RedisTLS``). Logging in:
    /// the endpoint's password, and its user for Redis 6 ACL users (`AUTH user password`).
    public struct Configuration: Sendable {
        /// Where Redis runs: one server, or a cluster.
        public enum Deployment: Sendable, Hashable {
            /// One server (with `AUTH` and `SELECT` from the endpoint).
            case standalone(RedisEndpoint)
            /// A Redis Cluster, discovered from any of these nodes.
            case cluster(seeds: [RedisEndpoint])

            /// The endpoints the configuration names.
            var endpoints: [RedisEndpoint] {
                switch self {
                case .standalone(let endpoint): [endpoint]
                case .cluster(let seeds): seeds
                }
            }
        }

        /// The TLS settings every connection uses: ``tls``, or the defaults when an endpoint is
        /// written `rediss://`, or none.
        var tlsInForce: RedisTLS? {
            tls ?? (deployment.endpoints.contains(where: \.usesTLS) ? RedisTLS() : nil)
        }

        /// What to do when Redis fails.
        public enum FailureMode: Sendable, Hashable {
            /// Lookups miss and stores, removals and usage throw `TierCacheError` (which
            /// `TieredCache` counts and carries on from): the request path never waits on a dead Redis
            /// beyond one timeout, and not at all while the circuit breaker is open.
            case degrade
            /// Lookups throw too.
            case throwErrors
        }

        /// The server or the cluster.
        public var deployment: Deployment
        /// Prefixed to every key, so several caches (or applications) share one Redis. Prefixes
        /// of caches sharing a Redis must not nest: with `tc:` and `tc:a:`, key `a:x` of the
        /// first is key `x` of the second (a record does not name its key), and the first's
        /// `removeAll()` and `usage()` take in the second's keys.
        public var keyPrefix: String
        /// The memory this tier may use, in bytes (match it to Redis's `maxmemory`).
        public var capacity: Int
        /// The largest entry, as a fraction of `capacity` (URLCache's 5% by default), and never
        /// above 512 MiB, the longest string Redis takes by default (`proto-max-bulk-len`).
        public var maxEntryFraction: Double
        /// zstd level for values (the same codec and record format as the LMDB tier).
        public var compressionLevel: Int32
        /// Connections kept open to each node; requests are spread over them.
        public var connectionsPerNode: Int
        /// How long a connection attempt may take before it fails.
        public var connectTimeout: Duration
        /// How long a command may wait for its reply before it fails. Timeouts must be positive; one
        /// over about 292 years (NIO's longest) is that long.
        public var commandTimeout: Duration
        /// What callers see when Redis fails; ``FailureMode/degrade`` by default.
        public var failureMode: FailureMode
        /// Consecutive failures of one node that open its circuit breaker, and how long it stays
        /// open: a dead node's keys become fast misses without touching the other nodes.
        public var breakerThreshold: Int
        /// How long an open circuit breaker stays open before the node is tried again; must not be
        /// negative.
        public var breakerOpenDuration: Duration
        /// TLS for every connection; nil (the default) means TLS only when an endpoint is written
        /// `rediss://`, then with ``RedisTLS``'s defaults.
        public var tls: RedisTLS?
        /// Where the tier logs Redis becoming unreachable (`warning`, once, with the error) and
        /// coming back (`notice`), failures in between (`debug`) and damaged records removed
        /// (`warning`). `nil`, the default, logs nothing.
        public var logger: Logger?
        /// Where the tier records its metrics (`MetricLabels`; no usage gauges: Redis's memory is
        /// the server's to report); `nil`, the default, means the factory the process bootstrapped
        /// when the tier is created (none: nothing recorded).
        public var metricsFactory: (any MetricsFactory)?

        /// A configuration; only the deployment and the capacity are required.
        public init(
            deployment: Deployment, keyPrefix: String = "tiercache:", capacity: Int,
            maxEntryFraction: Double = EntrySizeLimit.urlCacheDefaultFraction, compressionLevel: Int32 = 1,
            connectionsPerNode: Int = 2, connectTimeout: Duration = .seconds(1),
            commandTimeout: Duration = .milliseconds(500),
            failureMode: FailureMode = .degrade, breakerThreshold: Int = 5, breakerOpenDuration: Duration = .seconds(2),
            tls: RedisTLS? = nil, logger: Logger? = nil, metricsFactory: (any MetricsFactory)? = nil
        ) {
            self.tls = tls
            self.deployment = deployment
            self.keyPrefix = keyPrefix
            self.capacity = capacity
            self.maxEntryFraction = maxEntryFraction
            self.compressionLevel = compressionLevel
            self.connectionsPerNode = connectionsPerNode
            self.connectTimeout = connectTimeout
            self.commandTimeout = commandTimeout
            self.failureMode = failureMode
            self.breakerThreshold = breakerThreshold
            self.breakerOpenDuration = breakerOpenDuration
            self.logger = logger
            self.metricsFactory = metricsFactory
        }
    }
}
