import Foundation
import HTTPTypes

/// Whether a response may be stored (RFC 9111 §3).
public enum Storability {
    /// Why a response may not be stored.
    public enum Reason: String, Hashable, Sendable, CaseIterable {
        /// The request method is not GET (the only method this cache stores responses for).
        case method
        /// Not a final status, or one the cache does not store: 206 partial content and 304,
        /// and 412 and 416, which answer the request's preconditions or range rather than
        /// describe the resource (stored under its key, the answer to one request's `If-Match`
        /// or `Range` would be served to every request).
        case status
        /// `no-store` in the request or the response (§5.2.1.5, §5.2.2.5).
        case noStore
        /// `private` in a shared cache (§5.2.2.7).
        case privateResponse
        /// A shared cache and a request with `Authorization`, without `public`,
        /// `must-revalidate` or `s-maxage` in the response (§3.5).
        case authorization
        /// `Vary: *` can never match a later request (§4.1).
        case varyStar
        /// No explicit lifetime, no `public`, and a status not heuristically cacheable (§3).
        case noFreshnessInformation
        /// `must-understand` with a status code the cache does not know (§5.2.2.3).
        case mustUnderstand
        /// A shared cache and a response that sets a cookie, under
        /// ``HTTPCache/SetCookieInSharedCache/responseNotStored`` (the default). Not a rule of
        /// RFC 9111: the engine's choice, decided by ``HTTPCache``, not by
        /// ``reasonNotToStore(request:requestDirectives:response:directives:shared:)``.
        case setCookie
    }

    /// `nil` when `response` to `request` may be stored, or why not.
    public static func reasonNotToStore(
        request: HTTPRequest, requestDirectives: CacheControl, response: HTTPResponse, directives: CacheControl,
        shared: Bool
    ) -> Reason? {
        guard request.method == .get else { return .method }
        let code = response.status.code
        // `must-understand` lets a cache that knows the status ignore the response's `no-store`
        // (§5.2.2.3), never the request's (§5.2.1.5).
        if requestDirectives.noStore { return .noStore }
        if directives.mustUnderstand {
            // The codes whose caching rules this cache implements.
            guard [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501].contains(code) else { return .mustUnderstand }
        } else if directives.noStore {
            return .noStore
        }
        guard code >= 200, ![206, 304, 412, 416].contains(code) else { return .status }
        if shared, directives.isPrivate { return .privateResponse }
        if shared, request.headerFields[.authorization] != nil, !directives.allowsSharedReuseWithAuthorization {
            return .authorization
        }
        if Vary.fieldNames(of: response) == ["*"] { return .varyStar }
        let allowed =
            directives.isPublic
            || (!shared && directives.isPrivate)
            || Freshness.hasExplicitLifetime(response, directives: directives, shared: shared)
            || Freshness.heuristicallyCacheableStatuses.contains(code)
        return allowed ? nil : .noFreshnessInformation
    }
}

extension Storability {
    /// Whether a response to POST may be stored for a later GET or HEAD of the target URI
    /// (RFC 9110 §9.3.3): it needs explicit freshness (RFC 9111 §4.2.1) and a `Content-Location`
    /// that is the target URI (resolved against it, compared as primary keys are, §8.7). The
    /// response must then also be storable as a GET's would be (``reasonNotToStore(request:requestDirectives:response:directives:shared:)``).
    public static func isReusablePOSTResponse(_ response: HTTPResponse, to request: HTTPRequest, shared: Bool) -> Bool {
        guard request.method == .post, let location = response.headerFields[.contentLocation], let target = request.url,
            let resolved = URL(string: location, relativeTo: target)?.absoluteURL,
            let targetURI = HTTPCacheKey.normalizedURI(of: request),
            HTTPCacheKey.normalizedURI(of: HTTPRequest(method: .get, url: resolved)) == targetURI
        else { return false }
        let directives = CacheControl(fieldValues: response.headerFields[values: .cacheControl])
        return Freshness.hasExplicitLifetime(response, directives: directives, shared: shared)
    }
}
