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
        // Appended in place: this runs on every response.
        var text = cacheName
        if hit { text += "; hit" }
        if let forward {
            text += "; fwd="
            text += forward.rawValue
        }
        if let forwardStatus {
            text += "; fwd-status="
            text += String(forwardStatus)
        }
        if stored { text += "; stored" }
        if let ttl {
            text += "; ttl="
            text += String(ttl)
        }
        if let key {
            text += "; key="
            text += Self.quoted(key)
        }
        if let detail {
            text += "; detail="
            text += detail
        }
        return text
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
