import Foundation
import HTTPTypes

/// Request fields with which a client can steer what an origin generates, without the cache key
/// changing: the classic inputs of web cache poisoning (the origin reflects `X-Forwarded-Host`
/// into links, or treats a GET as `X-HTTP-Method-Override: DELETE`, and the proxy stores the
/// result under the plain URL for everyone).
///
/// The caching proxy is the edge of the origin's site, so it drops these fields from client
/// requests by default. The Hummingbird middleware sits inside the app, often behind a load
/// balancer that sets them, so it keeps them: a request overriding its method bypasses the cache,
/// and a response is stored varying on the others the request carried (``keyedNames``).
package enum ClientRoutingFields {
    /// The fields, by name. Lower case, as `HTTPField.Name.canonicalName` spells them.
    static let names: Set<String> = methodOverrides.union(keyedNames).union(perClientNames)

    /// Fields that turn a GET into another method in the frameworks that honour them.
    package static let methodOverrides: Set<String> = [
        "x-http-method-override", "x-http-method", "x-method-override",
    ]

    /// Fields naming what the client reached (host, scheme, port, path), which a load balancer
    /// sets to one value per site: varying on them costs no hits behind one, and keeps a value a
    /// client made up to the client's own requests.
    package static let keyedNames: Set<String> = [
        "x-forwarded-host", "x-forwarded-proto", "x-forwarded-scheme", "x-forwarded-port", "x-forwarded-prefix",
        "x-forwarded-server", "x-host", "x-original-url", "x-rewrite-url", "x-original-host",
        // The scheme by a flag (Rack reads `X-Forwarded-Ssl: on` as https; Microsoft's own).
        "x-forwarded-ssl", "front-end-https",
    ]

    /// Fields that differ for every client (its address): varying on them would store a copy per
    /// client.
    static let perClientNames: Set<String> = ["forwarded", "x-forwarded-for"]

    /// Whether a `Forwarded` value (RFC 7239) names the host or scheme the client reached, beside
    /// the client's address (`for=`): parameters are case-insensitive, separated by `;` and `,`.
    package static func forwardedNamesTarget(_ value: String) -> Bool {
        value.split(whereSeparator: { $0 == ";" || $0 == "," }).contains { element in
            // The name before `=`, spaces around it dropped, as lenient parsers read it.
            guard let equals = element.firstIndex(of: "=") else { return false }
            let name = element[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            return name == "host" || name == "proto"
        }
    }

    /// Whether `name` is one of them, spelt with `-` or, as CGI-style servers (PHP, WSGI, Rack)
    /// read `X_Forwarded_Host` the same as `X-Forwarded-Host` (`HTTP_X_FORWARDED_HOST`), with
    /// `_`. Most names start with neither letter, so the set is rarely consulted on the hit path.
    @inline(__always)
    package static func contains(_ name: HTTPField.Name) -> Bool {
        guard let canonical = canonicalName(of: name) else { return false }
        return names.contains(canonical)
    }

    /// `name` as the set spells it (`_` read as `-`), or nil when it cannot be one of them.
    @inline(__always)
    package static func canonicalName(of name: HTTPField.Name) -> String? {
        let canonical = name.canonicalName
        guard let first = canonical.utf8.first, first == UInt8(ascii: "x") || first == UInt8(ascii: "f") else {
            return nil
        }
        guard canonical.utf8.contains(UInt8(ascii: "_")) else { return canonical }
        return String(canonical.map { $0 == "_" ? "-" : $0 })
    }

    /// What a request's fields ask of a cache that keeps them (the middleware; the proxy behind
    /// a proxy that sets them): ``Steering/bypass`` for a method override or a `Forwarded` naming
    /// the host or scheme, else the fields naming what the client reached (``keyedNames``), to
    /// add to the stored response's `Vary` (``addVary(_:to:)``).
    package static func steering(of fields: HTTPFields) -> Steering {
        var varying: [HTTPField.Name] = []
        for field in fields {
            guard let name = canonicalName(of: field.name) else { continue }
            if methodOverrides.contains(name) || (name == "forwarded" && forwardedNamesTarget(field.value)) {
                return .bypass
            }
            if keyedNames.contains(name), !varying.contains(field.name) { varying.append(field.name) }
        }
        return .vary(varying)
    }

    /// Whether a field named `name` (as an HTTP/1 head spells it) is one ``steering(of:)`` acts
    /// on: a method override, `Forwarded`, or one of ``keyedNames`` (not `X-Forwarded-For`). Most
    /// names start with neither `x` nor `f` and are answered from their first byte.
    package static func steersCache(named name: String) -> Bool {
        guard let first = name.utf8.first, first | 0x20 == UInt8(ascii: "x") || first | 0x20 == UInt8(ascii: "f"),
            let canonical = HTTPField.Name(name).flatMap(canonicalName(of:))
        else { return false }
        return methodOverrides.contains(canonical) || keyedNames.contains(canonical) || canonical == "forwarded"
    }

    /// What ``steering(of:)`` asks.
    package enum Steering: Equatable, Sendable {
        /// Past the cache: the request asks the origin for something its key does not say.
        case bypass
        /// Through the cache, the stored response varying on these fields (none: as it is).
        case vary([HTTPField.Name])
    }

    /// Adds `names` to the `Vary` of `fields`, those it does not list already (none to `Vary: *`).
    ///
    /// A 304's (`to304`) only when it has a `Vary` of its own: a 304's `Vary` replaces the stored
    /// response's, which the names were added to as well, and different names remove the stored
    /// response; a 304 without one leaves the stored `Vary` as it is, and adding the names alone
    /// would replace it with them (a client adding a routing field to a revalidation evicted it).
    package static func addVary(_ names: [HTTPField.Name], to fields: inout HTTPFields, to304: Bool = false) {
        guard !names.isEmpty, !to304 || fields[.vary] != nil else { return }
        let listed = fields[values: .vary].flatMap { $0.split(separator: ",") }.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
        guard !listed.contains("*") else { return }
        let added = names.filter { !listed.contains($0.canonicalName) }.map(\.rawName)
        guard !added.isEmpty else { return }
        fields.append(HTTPField(name: .vary, value: added.joined(separator: ", ")))
    }

    /// `fields` without them (`fields` itself when there are none).
    package static func removing(from fields: HTTPFields) -> HTTPFields {
        guard fields.contains(where: { contains($0.name) }) else { return fields }
        var kept = HTTPFields()
        for field in fields where !contains(field.name) { kept.append(field) }
        return kept
    }
}
