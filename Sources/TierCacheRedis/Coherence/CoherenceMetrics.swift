import CoreMetrics
import TierCache

/// Why coherence emptied the upper tiers: the `cause` dimension of
/// `MetricLabels.coherenceFlushes`, and the start of the ``RedisCoherence/Event/flushed(reason:)``
/// text.
enum FlushCause: String, Sendable {
    /// Tracking (re)started: what the upper tiers held before was not covered.
    case trackingBegan = "tracking_began"
    /// A tracking connection was lost or missed its health check.
    case trackingLost = "tracking_lost"
    /// The server was flushed (`FLUSHALL`, `FLUSHDB`).
    case serverFlushed = "server_flushed"
    /// A push named a key that cannot be the tier's.
    case foreignKey = "foreign_key"
    /// A push could not be read as an invalidation.
    case unreadablePush = "unreadable_push"
    /// An upper tier could not remove an invalidated key.
    case invalidationFailed = "invalidation_failed"
    /// A data connection whose reads the server tracked closed (``TrackingRedirect``): the server
    /// forgot which keys it read, and will report no write of them.
    case dataConnectionClosed = "data_connection_closed"

    /// The cause in words, for events and logs.
    var description: String {
        switch self {
        case .trackingBegan: "tracking began"
        case .trackingLost: "tracking was lost"
        case .serverFlushed: "the server was flushed"
        case .foreignKey: "a key that is not one of the tier's"
        case .unreadablePush: "a push could not be read"
        case .invalidationFailed: "an invalidation could not be applied"
        case .dataConnectionClosed: "a data connection whose reads were tracked closed"
        }
    }
}

/// What a ``RedisCoherence`` records with swift-metrics (`MetricLabels`' `coherence…` names),
/// when the process bootstrapped a backend or the configuration gave a factory.
struct CoherenceMetrics: Sendable {
    private let factory: any MetricsFactory
    private let invalidatedKeys: Counter
    private let trackingLosses: Counter
    private let malformedPushes: Counter

    init?(_ explicit: (any MetricsFactory)?) {
        guard let factory = MetricsSystem.resolving(explicit) else { return nil }
        self.factory = factory
        invalidatedKeys = Counter(label: MetricLabels.coherenceInvalidatedKeys, factory: factory)
        trackingLosses = Counter(label: MetricLabels.coherenceTrackingLosses, factory: factory)
        malformedPushes = Counter(label: MetricLabels.coherenceMalformedPushes, factory: factory)
    }

    func recordInvalidated(_ count: Int) { invalidatedKeys.increment(by: Int64(count)) }
    func recordTrackingLoss() { trackingLosses.increment() }
    func recordMalformedPush() { malformedPushes.increment() }

    /// Flushes are rare: the counter of each cause is made when it is needed.
    func recordFlush(_ cause: FlushCause) {
        Counter(label: MetricLabels.coherenceFlushes, dimensions: [("cause", cause.rawValue)], factory: factory)
            .increment()
    }
}
