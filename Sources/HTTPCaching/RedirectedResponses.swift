import Foundation
import HTTPTypes

extension HTTPCache {
    /// `response` with its `Cache-Control` replaced by `no-store` when the transport's client
    /// followed redirects and reached it at `finalURL`, another resource than `request`'s.
    ///
    /// The engine stores what a transport returns under the request's key. A client that follows
    /// redirects returns the last hop's response, so `GET /account` → `302 /login` → `200,
    /// max-age=300` would keep the login page under `/account` and answer `/account` with it for
    /// five minutes. Transports built on such clients pass their responses through this.
    /// Replaced, not added to: a `must-understand` left beside it would override the `no-store`
    /// (RFC 9111 §5.2.2.3). Unchanged when `finalURL` is nil or keys as `request` does (the
    /// default key: a configured key that ignores part of the URL is not consulted, so at worst a
    /// response is not stored).
    static func unstorableIfRedirected(
        _ response: HTTPResponse, for request: HTTPRequest, reachedAt finalURL: URL?
    ) -> HTTPResponse {
        guard isRedirected(request, to: finalURL) else { return response }
        var marked = response
        marked.headerFields[.cacheControl] = "no-store"
        return marked
    }

    /// Whether a client that followed redirects reached `finalURL`, another resource than
    /// `request`'s.
    static func isRedirected(_ request: HTTPRequest, to finalURL: URL?) -> Bool {
        guard let finalURL else { return false }
        return !HTTPCacheKey.identifies(finalURL, sameAs: request)
    }

    /// Performs `request` with `exchange`, a client that may follow redirects and says where it
    /// ended (`reached`, nil when it did not move), and returns the response as the engine may
    /// store it: a 304 reached through a redirect is asked for again without validators (it
    /// confirmed another resource), and what was reached elsewhere is marked
    /// (``unstorableIfRedirected(_:for:reachedAt:)``). For transports built on such clients.
    package static func exchangeFollowingRedirects(
        _ request: HTTPRequest,
        with exchange: (HTTPRequest) async throws -> (response: HTTPResponse, body: Data, reached: URL?)
    ) async throws -> (HTTPResponse, Data) {
        var result = try await exchange(request)
        if result.response.status == .notModified, isRedirected(request, to: result.reached) {
            result = try await exchange(withoutValidators(request))
        }
        return (unstorableIfRedirected(result.response, for: request, reachedAt: result.reached), result.body)
    }

    /// `request` without the validators a cache adds to revalidate (`If-None-Match`,
    /// `If-Modified-Since`). A transport whose client followed a revalidation's redirect and got
    /// 304 sends this instead: the 304 confirmed the validators of the page redirected to, not of
    /// the stored response, and must not refresh it.
    static func withoutValidators(_ request: HTTPRequest) -> HTTPRequest {
        var unconditional = request
        unconditional.headerFields[.ifNoneMatch] = nil
        unconditional.headerFields[.ifModifiedSince] = nil
        return unconditional
    }
}

extension HTTPCacheKey {
    /// Whether `url` keys as `request` does (both normalised); false for a URL without a scheme
    /// or host.
    static func identifies(_ url: URL, sameAs request: HTTPRequest) -> Bool {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true), let scheme = components.scheme,
            var host = components.percentEncodedHost, !host.isEmpty
        else { return false }
        // URLComponents gives an IPv6 literal without its brackets on some platforms.
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
        let authority = components.port.map { "\(host):\($0)" } ?? host
        let path = components.percentEncodedPath + (components.percentEncodedQuery.map { "?\($0)" } ?? "")
        return defaultKey(scheme: scheme, authority: authority, path: path) == defaultKey(for: request)
    }
}
