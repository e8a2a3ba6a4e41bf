import Metrics

/// The proxy's counters, through swift-metrics (whatever backend the process bootstrapped:
/// Prometheus in `tiercache-proxy --metrics`).
struct ProxyMetrics: Sendable {
    /// How a request was answered, as the `outcome` dimension of `tiercache_proxy_requests_total`.
    enum Outcome: String, CaseIterable, Sendable {
        /// From storage, fresh (or allowed stale by the request).
        case hit
        /// From storage, stale, with a background revalidation (`stale-while-revalidate`).
        case staleWhileRevalidate = "stale_while_revalidate"
        /// From storage after the origin answered 304.
        case revalidated
        /// From storage, stale, because the origin failed (`stale-if-error`, offline fallback).
        case staleOnError = "stale_on_error"
        /// From the origin.
        case miss
        /// Streamed from the origin without the cache (too large, a range, an unsafe method).
        case bypass
        /// A 304 the proxy generated for a client's conditional request.
        case notModified = "not_modified"
        /// An error the proxy answered itself (400, 401, 403, 413, 431, 502, 503, 504).
        case error
        /// A `PURGE` the proxy carried out.
        case purge
    }

    private let requests: [Outcome: Counter]
    /// Bytes of response bodies sent to clients.
    let bytesSent: Counter
    /// Requests answered on the connection's event loop (``CacheHitFastPath``), a subset of the
    /// hits.
    let eventLoopAnswers: Counter
    /// Time to the origin's response head.
    let upstreamLatency: Metrics.Timer
    /// Answers refused 503 because the bodies in flight had reached
    /// ``CachingProxy/Configuration/maximumAnswerBytesInFlight``.
    let answersRefusedForMemory: Counter
    /// Streamed responses cut off before their end (the origin failed mid-body, or the client went).
    let abortedResponses: Counter

    init(label prefix: String = "tiercache_proxy") {
        var requests: [Outcome: Counter] = [:]
        for outcome in Outcome.allCases {
            requests[outcome] = Counter(label: "\(prefix)_requests_total", dimensions: [("outcome", outcome.rawValue)])
        }
        self.requests = requests
        bytesSent = Counter(label: "\(prefix)_response_body_bytes_total")
        eventLoopAnswers = Counter(label: "\(prefix)_event_loop_answers_total")
        upstreamLatency = Metrics.Timer(label: "\(prefix)_upstream_latency_seconds", preferredDisplayUnit: .seconds)
        answersRefusedForMemory = Counter(label: "\(prefix)_answers_refused_for_memory_total")
        abortedResponses = Counter(label: "\(prefix)_responses_aborted_total")
    }

    func count(_ outcome: Outcome) {
        requests[outcome]?.increment()
    }
}
