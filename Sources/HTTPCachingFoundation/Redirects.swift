import Foundation
import HTTPCaching
import HTTPTypes
import HTTPTypesFoundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How the URLSession adapters keep a redirect's target out of the redirect's key.
///
/// A session that follows a redirect hands back the last hop's response as the answer to the
/// first URL. Stored as it comes, `GET /account` → `302 /login` → `200, max-age=300` would keep
/// the login page under `/account` and answer `/account` with it for five minutes. So the
/// adapters ask the session not to follow (``RedirectRefusal``) and follow each hop through the
/// cache themselves (``HTTPCache/data(for:session:)``), each under its own key; where a session
/// follows anyway, the response is not stored (`HTTPCache.exchangeFollowingRedirects`).
enum Redirects {
    /// How many redirects one load follows before failing with `httpTooManyRedirects`, as
    /// URLSession does.
    static let limit = 16

    /// The statuses whose `Location` a client follows (RFC 9110 §15.4; 300 and 304 are not).
    static func isFollowed(_ status: HTTPResponse.Status) -> Bool {
        [301, 302, 303, 307, 308].contains(status.code)
    }

    /// The request a client sends next when `response` to `request` redirects it, as URLSession
    /// and the Fetch standard do; nil when `response` is not a redirect to an `http` or `https`
    /// URL.
    ///
    /// - A 303, and a 301 or 302 answering a POST, turn the request into a GET without a body
    ///   (a 303 answering a HEAD stays a HEAD); 307 and 308 keep the method and the body.
    /// - A request sent to another origin loses the fields that carry credentials or its origin
    ///   (``crossOriginFields``), as AsyncHTTPClient's redirects do.
    /// - A `Location` without a fragment keeps the request's (RFC 9110 §10.2.2).
    static func nextRequest(
        after request: URLRequest, body: Data?, response: HTTPResponse
    )
        -> (request: URLRequest, body: Data?)?
    {
        guard isFollowed(response.status), let location = response.headerFields[.location],
            let base = request.url, let target = URL(string: location, relativeTo: base)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else { return nil }
        var next = request
        if target.fragment == nil, let fragment = base.fragment {
            var components = URLComponents(url: target, resolvingAgainstBaseURL: false)
            components?.fragment = fragment
            next.url = components?.url ?? target
        } else {
            next.url = target
        }
        next.httpBodyStream = nil
        var nextBody = body
        let method = request.httpMethod?.uppercased() ?? "GET"
        if (response.status.code == 303 && method != "HEAD")
            || ([301, 302].contains(response.status.code) && method == "POST")
        {
            next.httpMethod = "GET"
            next.httpBody = nil
            nextBody = nil
            for field in ["Content-Type", "Content-Length", "Content-Encoding", "Content-Language", "Content-Location"]
            {
                next.setValue(nil, forHTTPHeaderField: field)
            }
        }
        if !isSameOrigin(base, target) {
            for field in crossOriginFields { next.setValue(nil, forHTTPHeaderField: field) }
        }
        return (next, nextBody)
    }

    /// The fields a request loses when a redirect sends it to another origin.
    static let crossOriginFields = ["Authorization", "Proxy-Authorization", "Cookie", "Origin"]

    private static func isSameOrigin(_ first: URL, _ second: URL) -> Bool {
        first.scheme?.lowercased() == second.scheme?.lowercased()
            && first.host?.lowercased() == second.host?.lowercased()
            && (first.port ?? defaultPort(first)) == (second.port ?? defaultPort(second))
    }

    private static func defaultPort(_ url: URL) -> Int? {
        switch url.scheme?.lowercased() {
        case "http": 80
        case "https": 443
        default: nil
        }
    }
}

/// A task or session delegate that declines every redirect, so the session answers with the
/// redirect itself: the adapters follow it through the cache (``Redirects``).
///
/// Sendable: it has no state.
final class RedirectRefusal: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
