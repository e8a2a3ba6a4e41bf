import Foundation
import HTTPTypes

/// A response from ``HTTPCache``, and where it came from.
public struct HTTPCacheResponse: Sendable {
    /// Where a response came from.
    public enum Source: Hashable, Sendable, CustomStringConvertible {
        /// The network; the cache had nothing usable (or was told to ignore it).
        case network
        /// The cache, fresh (or usable under the request's cache policy or `max-stale`).
        case cache
        /// The cache, after the origin answered a conditional request with 304 Not Modified.
        case revalidated
        /// The cache, stale, within `stale-while-revalidate`, while a background revalidation
        /// runs (none where the transport lasts only as long as the request, as in
        /// `HTTPCacheMiddleware`: the first request after the window revalidates).
        case staleWhileRevalidate
        /// The cache, stale, because the network failed (offline fallback or `stale-if-error`).
        case staleFallback
        /// Neither: nothing stored could answer and the request forbade the network
        /// (`Cache-Control: only-if-cached`), so the cache answered 504 Gateway Timeout itself
        /// (RFC 9111 §5.2.1.7). A miss, not a hit.
        case unsatisfiable

        /// Whether the body came from storage rather than over the network.
        public var isFromCache: Bool {
            switch self {
            case .cache, .revalidated, .staleWhileRevalidate, .staleFallback: true
            case .network, .unsatisfiable: false
            }
        }

        /// The source in words, for logs.
        public var description: String {
            switch self {
            case .network: "network"
            case .cache: "cache"
            case .revalidated: "cache (revalidated)"
            case .staleWhileRevalidate: "cache (stale while revalidating)"
            case .staleFallback: "cache (stale, network failed)"
            case .unsatisfiable: "cache (nothing stored, only-if-cached: 504)"
            }
        }
    }

    /// The response; from the cache it carries an `Age` field (RFC 9111 §5.1).
    public var response: HTTPResponse
    /// The content.
    public var body: Data
    /// Where it came from.
    public var source: Source
    /// When the served response was stored, for responses from the cache.
    public var storedAt: Date?
    /// The served response's current age in seconds (RFC 9111 §4.2.3), for responses from the cache.
    public var age: TimeInterval?
    /// Data a store hook attached to the stored response.
    public var userInfo: [String: String]
    /// The error of the fetch that failed, when ``source`` is ``Source/staleFallback``.
    public var networkError: (any Error)?
    /// For a response from the network: whether this request stored it (in at least one tier).
    /// Of the identical requests that shared one fetch, the first to get the response stores it
    /// and the others report `false`.
    public var wasStored = false
    /// For a response from the network: the stored response the cache held for the request and
    /// did not serve as it was (the origin did not confirm it), if any; `nil` is a miss. For a
    /// ``Source/revalidated`` one: why the stored response was not served without asking.
    /// `Cache-Status` (RFC 9211 §2.2) says `fwd=stale` and `fwd=request` for the two cases.
    public var replacedStoredResponse: ReplacedStoredResponse?

    /// Why a stored response was passed over (``replacedStoredResponse``).
    public enum ReplacedStoredResponse: Sendable, Hashable {
        /// It was stale, or its own `no-cache` asked for validation.
        case stale
        /// It was fresh, but the request's directives (`no-cache`, `max-age`, `min-fresh`,
        /// `Pragma: no-cache`) or its cache policy would not take it.
        case passedOverByRequest
    }
    /// The served response's freshness lifetime in seconds (RFC 9111 §4.2.1), for responses from
    /// the cache; fresh for `freshnessLifetime - age` more seconds (negative: stale).
    public var freshnessLifetime: TimeInterval?

    /// A response as the cache returns it; the optional facts apply to responses from storage.
    public init(
        response: HTTPResponse, body: Data, source: Source, storedAt: Date? = nil, age: TimeInterval? = nil,
        userInfo: [String: String] = [:], networkError: (any Error)? = nil, freshnessLifetime: TimeInterval? = nil
    ) {
        self.response = response
        self.body = body
        self.source = source
        self.storedAt = storedAt
        self.age = age
        self.userInfo = userInfo
        self.networkError = networkError
        self.freshnessLifetime = freshnessLifetime
    }
}

/// A value for app code that shows "this may be out of date" when the network failed.
public enum CachedValue<Value> {
    /// From the network, or from the cache while fresh.
    case fresh(Value)
    /// From the cache, stale, because the network failed; `storedAt` is when it was stored.
    case cached(Value, storedAt: Date)

    /// The value, whichever case.
    public var value: Value {
        switch self {
        case .fresh(let value), .cached(let value, _): value
        }
    }
}

extension CachedValue: Sendable where Value: Sendable {}
extension CachedValue: Equatable where Value: Equatable {}
