import Foundation
import HTTPTypes

/// Which stored responses a request invalidates (RFC 9111 §4.4).
public enum Invalidation {
    /// Methods that do not change state (RFC 9110 §9.2.1).
    package static let safeMethods: Set<HTTPRequest.Method> = [.get, .head, .options, .trace]

    /// The normalised URIs whose stored responses must be invalidated after `response` to
    /// `request`: for an unsafe method with a non-error (2xx or 3xx) response, the target URI
    /// (first) and the `Location` and `Content-Location` URIs of the same origin (§4.4). Empty
    /// otherwise.
    public static func invalidatedURIs(request: HTTPRequest, response: HTTPResponse) -> [String] {
        guard !safeMethods.contains(request.method), (200..<400).contains(response.status.code),
            let target = HTTPCacheKey.normalizedURI(of: request)
        else { return [] }
        var uris = [target]
        guard let scheme = request.scheme, let authority = request.authority,
            let base = URL(string: "\(scheme)://\(authority)\(request.path ?? "/")")
        else { return uris }
        for name in [HTTPField.Name.location, .contentLocation] {
            // Same origin as the keys spell it (the scheme's default port written or not):
            // compared as URLs, `example.com` and `example.com:443` were two origins, and the
            // stored `/b` outlived a PUT answered with `Location: https://example.com:443/b`.
            guard let value = response.headerFields[name], let url = URL(string: value, relativeTo: base)?.absoluteURL,
                let uri = HTTPCacheKey.normalizedURI(of: HTTPRequest(method: .get, url: url)),
                origin(of: uri) == origin(of: target)
            else { continue }
            if !uris.contains(uri) { uris.append(uri) }
        }
        return uris
    }

    /// `scheme://authority` of a normalised URI.
    private static func origin(of uri: String) -> Substring {
        guard let separator = uri.range(of: "://") else { return Substring(uri) }
        let path = uri[separator.upperBound...].firstIndex(of: "/") ?? uri.endIndex
        return uri[..<path]
    }
}
