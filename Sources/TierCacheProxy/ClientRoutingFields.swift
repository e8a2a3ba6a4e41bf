import HTTPTypes

/// Request fields with which a client can steer what an origin generates, without the cache key
/// changing: the classic inputs of web cache poisoning (the origin reflects `X-Forwarded-Host`
/// into links, or treats a GET as `X-HTTP-Method-Override: DELETE`, and the proxy stores the
/// result under the plain URL for everyone).
///
/// The proxy is the edge of the origin's site, so it drops these fields from client requests by
/// default (``CachingProxy/Configuration/forwardsClientRoutingFields`` keeps them, for a proxy
/// behind another that sets them itself).
enum ClientRoutingFields {
    /// The fields, by name. Lower case, as `HTTPField.Name.canonicalName` spells them.
    static let names: Set<String> = [
        "forwarded", "x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-forwarded-scheme",
        "x-forwarded-port", "x-forwarded-prefix", "x-forwarded-server", "x-host", "x-original-url",
        "x-rewrite-url", "x-original-host", "x-http-method-override", "x-http-method", "x-method-override",
    ]

    /// Whether `name` is one of them, spelt with `-` or, as CGI-style servers (PHP, WSGI, Rack)
    /// read `X_Forwarded_Host` the same as `X-Forwarded-Host` (`HTTP_X_FORWARDED_HOST`), with
    /// `_`. Most names start with neither letter, so the set is rarely consulted on the hit path.
    @inline(__always)
    static func contains(_ name: HTTPField.Name) -> Bool {
        let canonical = name.canonicalName
        guard let first = canonical.utf8.first, first == UInt8(ascii: "x") || first == UInt8(ascii: "f") else {
            return false
        }
        if names.contains(canonical) { return true }
        guard canonical.utf8.contains(UInt8(ascii: "_")) else { return false }
        return names.contains(String(canonical.map { $0 == "_" ? "-" : $0 }))
    }

    /// `fields` without them (`fields` itself when there are none).
    static func removing(from fields: HTTPFields) -> HTTPFields {
        guard fields.contains(where: { contains($0.name) }) else { return fields }
        var kept = HTTPFields()
        for field in fields where !contains(field.name) { kept.append(field) }
        return kept
    }
}
