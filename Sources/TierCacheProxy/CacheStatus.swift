import HTTPCaching
import HTTPTypes

/// The `Cache-Status` response field (RFC 9211): how this cache handled the request.
///
/// Examples: `TierCache; hit; ttl=3542` (served from storage, fresh for another 3,542 s),
/// `TierCache; fwd=uri-miss; stored; ttl=3600`, `TierCache; fwd=stale; fwd-status=304; ttl=60`
/// (revalidated), `TierCache; fwd=stale; fwd-status=502; ttl=-30; detail=stale-if-error`.
struct CacheStatus: Sendable, CustomStringConvertible {
    /// Why the request went forward (RFC 9211 §2.2).
    enum Forward: String, Sendable {
        case bypass, method, uriMiss = "uri-miss", request, stale
    }

    var cacheName: String
    var hit = false
    var forward: Forward?
    var forwardStatus: Int?
    var stored = false
    var ttl: Int?
    var key: String?
    var detail: String?

    static let fieldName = HTTPField.Name("Cache-Status")!

    var description: String {
        var parts = [cacheName]
        if hit { parts.append("hit") }
        if let forward { parts.append("fwd=\(forward.rawValue)") }
        if let forwardStatus { parts.append("fwd-status=\(forwardStatus)") }
        if stored { parts.append("stored") }
        if let ttl { parts.append("ttl=\(ttl)") }
        if let key { parts.append("key=\(Self.quoted(key))") }
        if let detail { parts.append("detail=\(detail)") }
        return parts.joined(separator: "; ")
    }

    /// A structured-field string (RFC 8941 §3.3.3): only printable ASCII, with `"` and `\` escaped.
    private static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"", "\\": result += "\\\(scalar)"
            case " "..."~": result.unicodeScalars.append(scalar)
            default: result += "%"  // outside what a structured string may hold
            }
        }
        return result + "\""
    }
}
