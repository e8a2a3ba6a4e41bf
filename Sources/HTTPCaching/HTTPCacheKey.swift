import Foundation
import HTTPTypes

/// The primary cache key of a request (RFC 9111 §2): its method and normalised target URI.
///
/// Normalisation (RFC 3986 §6.2.2–6.2.3): scheme and host lower-cased, the scheme's default port
/// dropped, an empty path made `/`, the fragment dropped; the query is kept as sent. HEAD
/// requests share GET's key (a HEAD can be answered from a stored GET).
public enum HTTPCacheKey {
    /// The normalised URI of `request`, or `nil` without scheme and authority.
    public static func normalizedURI(of request: HTTPRequest) -> String? {
        guard let scheme = request.scheme, let authority = request.authority, !authority.isEmpty else { return nil }
        let lowerScheme = scheme.lowercased()
        var host = Substring(authority)
        if let userInfoEnd = host.utf8.lastIndex(of: UInt8(ascii: "@")) { host = host[host.utf8.index(after: userInfoEnd)...] }
        let defaultPort = lowerScheme == "https" ? ":443" : lowerScheme == "http" ? ":80" : nil
        if let defaultPort, host.hasSuffix(defaultPort) {
            host = host.dropLast(defaultPort.utf8.count)
        }
        var path = Substring(request.path ?? "/")
        if let fragment = path.utf8.firstIndex(of: UInt8(ascii: "#")) { path = path[..<fragment] }
        let needsSlash = path.isEmpty || path.utf8.first == UInt8(ascii: "?")
        return lowerScheme + "://" + host.lowercased() + (needsSlash ? "/" : "") + path
    }

    /// The default key: `GET <normalised URI>`; `nil` when the request has no absolute URI.
    public static func defaultKey(for request: HTTPRequest) -> String? {
        normalizedURI(of: request).map { "GET " + $0 }
    }

    /// A key function that removes query items whose names `isDropped` accepts (tracking
    /// parameters such as `utm_source`), like SDWebImage's `cacheKeyFilter`.
    public static func droppingQueryItems(where isDropped: @escaping @Sendable (String) -> Bool) -> @Sendable (HTTPRequest) -> String? {
        { request in
            guard let key = defaultKey(for: request), let queryStart = key.firstIndex(of: "?") else { return defaultKey(for: request) }
            let kept = key[key.index(after: queryStart)...].split(separator: "&", omittingEmptySubsequences: false).filter { item in
                let name = item.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
                return !isDropped(name.removingPercentEncoding ?? name)
            }
            let base = String(key[..<queryStart])
            return kept.isEmpty ? base : base + "?" + kept.joined(separator: "&")
        }
    }
}
