import Foundation
import HTTPTypes

/// The primary cache key of a request (RFC 9111 §2): its method and normalised target URI.
///
/// Normalisation (RFC 3986 §6.2.2–6.2.3): scheme and host lower-cased, the scheme's default port
/// dropped, an empty path made `/`, the fragment dropped; the path and query are kept as sent,
/// but for each byte a URI may not hold, percent-encoded as the request reaches an origin
/// (`/a|b` is `/a%7Cb`): the two forms are one request to the origin, and share a key, so a purge
/// or an invalidation of one reaches the other. HEAD requests share GET's key (a HEAD can be
/// answered from a stored GET).
public enum HTTPCacheKey {
    /// The normalised URI of `request`, or `nil` without scheme and authority.
    public static func normalizedURI(of request: HTTPRequest) -> String? {
        normalized(request, prefix: "")
    }

    /// The default key: `GET <normalised URI>`; `nil` when the request has no absolute URI.
    public static func defaultKey(for request: HTTPRequest) -> String? {
        normalized(request, prefix: "GET ")
    }

    /// `prefix` and the normalised URI, built in one pass over the bytes into one allocation
    /// (this runs on every lookup).
    private static func normalized(_ request: HTTPRequest, prefix: StaticString) -> String? {
        guard let scheme = request.scheme, let authority = request.authority else { return nil }
        return normalized(scheme: scheme, authority: authority, path: request.path ?? "/", prefix: prefix)
    }

    /// The default key from a request target's parts, for a caller that has read them already.
    static func defaultKey(scheme: String, authority: String, path: String) -> String? {
        normalized(scheme: scheme, authority: authority, path: path, prefix: "GET ")
    }

    private static func normalized(scheme: String, authority: String, path: String, prefix: StaticString) -> String? {
        guard !authority.isEmpty else { return nil }
        var scheme = scheme
        var authority = authority
        var path = RequestTarget.keyForm(path) ?? path
        return scheme.withUTF8 { scheme in
            authority.withUTF8 { authority in
                path.withUTF8 { path in
                    let host = keyedHost(authority, scheme: scheme)
                    var pathEnd = path.count
                    if let fragment = path.firstIndex(of: UInt8(ascii: "#")) { pathEnd = fragment }
                    let needsSlash = pathEnd == 0 || path[0] == UInt8(ascii: "?")
                    let capacity =
                        prefix.utf8CodeUnitCount + scheme.count + 3 + host.count + (needsSlash ? 1 : 0) + pathEnd
                    return String(unsafeUninitializedCapacity: capacity) { output in
                        var index = 0
                        func put(_ byte: UInt8) {
                            output[index] = byte
                            index += 1
                        }
                        prefix.withUTF8Buffer { for byte in $0 { put(byte) } }
                        for byte in scheme { put(ASCIICase.lowercase(byte)) }
                        for byte in "://".utf8 { put(byte) }
                        for byte in host { put(ASCIICase.lowercase(byte)) }
                        if needsSlash { put(UInt8(ascii: "/")) }
                        for byte in path[..<pathEnd] { put(byte) }
                        return index
                    }
                }
            }
        }
    }

    /// The part of `authority` the key keeps: without user information, then without the
    /// scheme's default port.
    private static func keyedHost(
        _ authority: UnsafeBufferPointer<UInt8>, scheme: UnsafeBufferPointer<UInt8>
    ) -> UnsafeBufferPointer<UInt8> {
        var host = authority
        if let at = host.lastIndex(of: UInt8(ascii: "@")) {
            host = UnsafeBufferPointer(rebasing: host[(at + 1)...])
        }
        let defaultPort: StaticString? =
            ASCIICase.equals(scheme, ignoringCaseTo: "https")
            ? ":443" : ASCIICase.equals(scheme, ignoringCaseTo: "http") ? ":80" : nil
        if let defaultPort, host.count > defaultPort.utf8CodeUnitCount,
            defaultPort.withUTF8Buffer({ suffix in host.suffix(suffix.count).elementsEqual(suffix) })
        {
            host = UnsafeBufferPointer(rebasing: host[..<(host.count - defaultPort.utf8CodeUnitCount)])
        }
        return host
    }

    /// Whether the key writes `path` (a request target) as it is written: no byte a URI may not
    /// hold, which the key percent-encodes, and no fragment, which it drops. A server whose route
    /// reads the target as written caches only such requests: `/search?tag[]=new` and
    /// `/search?tag%5B%5D=new` share a key, and a route reading the raw query tells them apart.
    package static func keepsTargetAsWritten(_ path: String) -> Bool {
        RequestTarget.keyForm(path) == nil
    }

    /// Whether the key writes `authority` as it is written: no upper-case letter (the key lowers
    /// them), no user information and not `scheme`'s default port (the key drops both). A server
    /// whose route reads the authority as written caches only such requests: for any other,
    /// the route and the key could name two origins (a route redirecting `SHOP.EXAMPLE` to its
    /// canonical host would have the redirect stored for the canonical host's users).
    package static func keepsAuthorityAsWritten(_ authority: String, scheme: String) -> Bool {
        var authority = authority
        var scheme = scheme
        return authority.withUTF8 { authority in
            scheme.withUTF8 { scheme in
                keyedHost(authority, scheme: scheme).count == authority.count
                    && !authority.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
            }
        }
    }

    /// A key function that removes query items whose names `isDropped` accepts (tracking
    /// parameters such as `utm_source`), like SDWebImage's `cacheKeyFilter`.
    public static func droppingQueryItems(
        where isDropped: @escaping @Sendable (String) -> Bool
    ) -> @Sendable (HTTPRequest) -> String? {
        { request in
            guard let key = defaultKey(for: request), let queryStart = key.firstIndex(of: "?") else {
                return defaultKey(for: request)
            }
            let kept = key[key.index(after: queryStart)...].split(separator: "&", omittingEmptySubsequences: false)
                .filter { item in
                    let name = item.split(separator: "=", maxSplits: 1).first.map(String.init) ?? ""
                    return !isDropped(name.removingPercentEncoding ?? name)
                }
            let base = String(key[..<queryStart])
            return kept.isEmpty ? base : base + "?" + kept.joined(separator: "&")
        }
    }
}
