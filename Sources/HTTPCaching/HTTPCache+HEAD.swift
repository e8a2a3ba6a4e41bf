import Foundation
import HTTPTypes
import TierCache

/// HEAD (RFC 9110 §9.3.2, RFC 9111 §4.3.5): a HEAD is answered from a stored GET response when
/// there is one; a 200 to a HEAD the cache sent updates that stored response when their
/// validators match, and makes it stale otherwise; and a HEAD response is kept for later HEADs
/// of a resource with no stored GET response, under a key of its own, so that it never answers
/// a GET (it has no content).
extension HTTPCache {
    /// Where a resource's HEAD response is kept: beside its primary key, never equal to a GET's.
    static func headKey(_ primaryKey: CacheKey) -> CacheKey {
        CacheKey(primaryKey, appending: "\u{1F}head")
    }

    /// Whether `located` was read from the HEAD responses' key of `primaryKey` (or its variants).
    static func isHEADResponse(_ located: Located, primaryKey: CacheKey) -> Bool {
        located.key.rawValue.hasPrefix(headKey(primaryKey).rawValue)
    }

    /// Handles a response to a HEAD the cache sent for `request`; returns whether it was kept.
    /// `stored` is the response the cache held for the request, if any.
    func storeHEADResponse(
        _ exchange: Exchange, for request: HTTPRequest, primaryKey: CacheKey, stored: Located?
    ) async -> Bool {
        if let stored, !Self.isHEADResponse(stored, primaryKey: primaryKey) {
            // §4.3.5: update the stored GET response it could have been chosen for, or "consider
            // the stored response to be stale": marked so (as a soft purge marks it), the next GET
            // revalidates it with its validators, and it still serves where a stale response may
            // (`stale-if-error`). Removed, a HEAD that only announced no length (an app's HEAD
            // route answering `Content-Length: 0`) lost the stored GET and its revalidation.
            guard Validation.headResponse(exchange.response, updates: stored.response) else {
                if exchange.response.status.code == 200 {
                    var marked = stored.response
                    marked.invalidatedAt = min(marked.invalidatedAt ?? exchange.responseTime, exchange.responseTime)
                    _ = await writeFreshened(marked, under: stored.key, request: request)
                    counters.recordInvalidation()
                }
                return false
            }
            let updated = Validation.freshen(
                stored.response, with: exchange.response, requestTime: exchange.requestTime,
                responseTime: exchange.responseTime)
            return await writeFreshened(updated, under: stored.key, request: request)
        }
        // No stored GET response: the HEAD response answers later HEADs until one is stored
        // (judged as the GET's response would be).
        var get = request
        get.method = .get
        return await storeIfAllowed(exchange, for: get, primaryKey: Self.headKey(primaryKey))
    }
}
