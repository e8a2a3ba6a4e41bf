import Foundation
import HTTPTypes
import TierCache

/// A hook that runs before a response is stored: it may change the response, veto it, or
/// override its storage policy.
///
/// Hooks run in order on a ``Candidate``; setting ``Candidate/storagePolicy`` to
/// `StoragePolicy.notAllowed` vetoes the store. The response sent to the caller is never
/// changed by a hook: hooks shape only what is kept.
///
/// Hooks run again when a 304 or a HEAD response updates a stored response's fields (RFC 9111
/// §3.2), on the updated response and the stored body: what a hook removed stays removed, and a
/// veto then removes the stored copy. A hook should therefore give the same result when it runs
/// on what it produced; a change it makes to the body on that run is not kept.
public struct StoreHook: Sendable {
    /// What is about to be stored.
    public struct Candidate: Sendable {
        /// The request that produced the response.
        public let request: HTTPRequest
        /// The response as it will be stored (hop-by-hop fields already removed).
        public var response: HTTPResponse
        /// The content.
        public var body: Data
        /// Where it may be stored: from the cache's scheme table, overridable per response.
        public var storagePolicy: StoragePolicy
        /// Application data kept with the response and returned with it.
        public var userInfo: [String: String]
    }

    private let body: @Sendable (inout Candidate) -> Void

    /// A hook running `body` on each candidate.
    public init(_ body: @escaping @Sendable (inout Candidate) -> Void) {
        self.body = body
    }

    func apply(to candidate: inout Candidate) { body(&candidate) }

    /// Removes authentication fields from what is stored: `Authorization`, `Proxy-Authorization`,
    /// `Set-Cookie`, `WWW-Authenticate`, `Proxy-Authenticate`, plus `additionalFields`.
    public static func stripAuthenticationFields(additionalFields: [HTTPField.Name] = []) -> StoreHook {
        let names: [HTTPField.Name] =
            [.authorization, .proxyAuthorization, .setCookie, .wwwAuthenticate, .proxyAuthenticate] + additionalFields
        return StoreHook { candidate in
            for name in names { candidate.response.headerFields[values: name] = [] }
        }
    }

    /// Replaces the response's `Cache-Control` with `value` where `applies` says so: to cache an
    /// API that sends no caching fields (`"max-age=300"`), or to keep one out (`"no-store"`, or
    /// `"private"` in a shared cache). The replacement takes effect for storing and for every
    /// later freshness decision.
    ///
    /// ``HTTPCache`` judges a response by RFC 9111 §3 both as the origin sent it and as the hooks
    /// leave it: a hook can keep out what the origin allowed, not store what it forbade (a
    /// `no-store` response, or a 500 without a lifetime). `TieredURLCache`, a private cache whose
    /// hooks stand where `URLSession`'s `willCacheResponse` would, judges only what they leave.
    public static func overrideCacheControl(
        _ value: String, where applies: @escaping @Sendable (HTTPRequest, HTTPResponse) -> Bool = { _, _ in true }
    ) -> StoreHook {
        StoreHook { candidate in
            guard applies(candidate.request, candidate.response) else { return }
            candidate.response.headerFields[.cacheControl] = value
            candidate.response.headerFields[.expires] = nil
        }
    }

    /// Sets `userInfo[key]` from the request and response.
    public static func stampUserInfo(
        _ key: String, _ value: @escaping @Sendable (HTTPRequest, HTTPResponse) -> String?
    ) -> StoreHook {
        StoreHook { candidate in
            candidate.userInfo[key] = value(candidate.request, candidate.response)
        }
    }

    /// Overrides the storage policy per response (for example `.allowedInMemoryOnly` for
    /// personal data, `.notAllowed` to veto).
    public static func storagePolicy(
        _ decide: @escaping @Sendable (HTTPRequest, HTTPResponse) -> StoragePolicy?
    ) -> StoreHook {
        StoreHook { candidate in
            if let policy = decide(candidate.request, candidate.response) { candidate.storagePolicy = policy }
        }
    }
}
