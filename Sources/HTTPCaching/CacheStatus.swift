import HTTPTypes
import RawStructuredFieldValues

/// The `Cache-Status` response field (RFC 9211): how a cache handled the request. The caching
/// proxy and the `URLProtocol` drop-in label their responses with it.
///
/// Examples: `TierCache;hit;ttl=3542` (served from storage, fresh for another 3,542 s),
/// `TierCache;fwd=uri-miss;stored;ttl=3600`, `TierCache;fwd=stale;fwd-status=304;ttl=60`
/// (revalidated), `TierCache;fwd=stale;fwd-status=502;ttl=-30;detail=stale-if-error`.
public struct CacheStatus: Sendable, Hashable, CustomStringConvertible {
    /// Why the request went forward (RFC 9211 §2.2).
    public enum Forward: String, Sendable, Hashable {
        /// The cache was configured not to handle the request.
        case bypass
        /// The request method cannot be served from the cache.
        case method
        /// The cache had no response for the request's URI.
        case uriMiss = "uri-miss"
        /// The request's own directives (`no-cache`, `max-age=0`) sent it forward.
        case request
        /// The stored response was stale and needed validation.
        case stale
    }

    /// The cache's name, the list member's value: a structured token (a letter first).
    public var cacheName: String
    /// `hit`: the response came from the cache without going forward.
    public var hit = false
    /// `fwd`: why the request went forward, if it did.
    public var forward: Forward?
    /// `fwd-status`: the status of the response from forward.
    public var forwardStatus: Int?
    /// `stored`: the response from forward was stored.
    public var stored = false
    /// `ttl`: the response's remaining freshness in seconds (negative when stale).
    public var ttl: Int?
    /// `key`: the cache key, for debugging.
    public var key: String?
    /// `detail`: an implementation-specific note, a structured token (e.g. `stale-while-revalidate`).
    public var detail: String?

    /// The field's name.
    public static let fieldName = HTTPField.Name("Cache-Status")!

    /// A status for the cache named `cacheName`, with no parameters yet.
    public init(cacheName: String) {
        self.cacheName = cacheName
    }

    /// The field value: a Structured Field List of one member (RFC 9211 §2, RFC 8941 §3.1),
    /// written by swift-http-structured-headers' serializer: the cache's name as a token, its
    /// parameters as Booleans, tokens, integers and strings.
    public var description: String {
        var parameters = OrderedMap<String, RFC9651BareItem>()
        if hit { parameters["hit"] = .bool(true) }
        if let forward { parameters["fwd"] = .token(forward.rawValue) }
        if let forwardStatus { parameters["fwd-status"] = .integer(Int64(forwardStatus)) }
        if stored { parameters["stored"] = .bool(true) }
        if let ttl { parameters["ttl"] = .integer(Int64(ttl)) }
        if let key { parameters["key"] = .string(Self.structuredString(key)) }
        if let detail { parameters["detail"] = .token(detail) }
        let member = ItemOrInnerList.item(Item(bareItem: .token(cacheName), parameters: parameters))
        var serializer = StructuredFieldValueSerializer()
        guard let bytes = try? serializer.writeListFieldValue([member]) else {
            // Unreachable with a validated name and the tokens above; a cache name alone is
            // still a valid field.
            return cacheName
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Why a GET or HEAD that `result` answered from the network went forward: what the cache
    /// held and passed over (``HTTPCacheResponse/replacedStoredResponse``: `stale`, or `request`
    /// when the request would not take it); with nothing stored, `request` if the request's own
    /// `no-cache` or `max-age=0` (in `requestDirectives`) would not have taken a response anyway,
    /// else `uri-miss`, which RFC 9211 §2.2 keeps for a cache that held nothing for the URI.
    public static func forward(ofNetworkResponse result: HTTPCacheResponse, requestDirectives: CacheControl) -> Forward
    {
        switch result.replacedStoredResponse {
        case .stale?: .stale
        case .passedOverByRequest?: .request
        case nil: requestDirectives.noCache || requestDirectives.maxAge == 0 ? .request : .uriMiss
        }
    }

    /// Why a request that `result` answered with a stored response the origin confirmed (304)
    /// went forward: `request` when the stored response was fresh and the request would not take
    /// it so, else `stale`.
    public static func forward(ofRevalidated result: HTTPCacheResponse) -> Forward {
        result.replacedStoredResponse == .passedOverByRequest ? .request : .stale
    }

    /// `text` with what a structured string may not hold (RFC 8941 §3.3.3: printable ASCII only)
    /// replaced by `%`: a key built from a request target can carry anything.
    private static func structuredString(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { (" "..."~").contains($0) ? $0 : "%" }))
    }
}
