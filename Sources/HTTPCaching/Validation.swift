import Foundation
import HTTPTypes

/// Revalidation of stored responses (RFC 9111 §4.3).
public enum Validation {
    /// The request to send to revalidate `stored` (§4.3.1): `request` with `If-None-Match` from
    /// the stored `ETag` and `If-Modified-Since` from the stored `Last-Modified`. `nil` when the
    /// stored response has no validator, so a full request is needed. A request that already
    /// carries its own preconditions is the client's business and is returned unchanged.
    public static func conditionalRequest(for request: HTTPRequest, revalidating stored: StoredResponse) -> HTTPRequest?
    {
        if ClientPreconditions.isPresent(in: request) { return request }
        let etag = stored.response.headerFields[.eTag].flatMap(EntityTag.init)
        let lastModified = stored.response.headerFields[.lastModified].flatMap { HTTPDate.parse($0) }
        guard etag != nil || lastModified != nil else { return nil }
        var conditional = request
        if let etag { conditional.headerFields[.ifNoneMatch] = etag.description }
        if let lastModified { conditional.headerFields[.ifModifiedSince] = HTTPDate.format(lastModified) }
        return conditional
    }

    /// Whether a 304 response selects `stored` when it is the resource's only stored response
    /// (§4.3.4; ``storedResponsesUpdated(by:among:)`` with one candidate): a strong `ETag` in the
    /// 304 must match the stored one strongly, a weak one weakly; without an `ETag`, a
    /// `Last-Modified` must match; a 304 with neither selects `stored` only when `stored` has no
    /// validator either (a bare 304 does not say which representation it confirms).
    public static func notModified(_ response: HTTPResponse, selects stored: StoredResponse) -> Bool {
        storedResponsesUpdated(by: response, among: [stored]) == [0]
    }

    /// Which of `stored` (every stored response of the resource, its variants included) a 304
    /// updates, by the selection of §4.3.4, in order:
    /// 1. if the 304 has a strong validator (a strong `ETag`), every stored response with the
    ///    same strong validator, and none if no stored response has it;
    /// 2. else, if it has a weak validator (a weak `ETag`, or a `Last-Modified`, which a cache
    ///    cannot know to be strong), the most recently stored of the responses it matches
    ///    (weakly, or by equal date);
    /// 3. else (no validator), the one stored response, if there is exactly one and it has no
    ///    validator either.
    /// - Returns: indices into `stored`.
    public static func storedResponsesUpdated(by notModified: HTTPResponse, among stored: [StoredResponse]) -> [Int] {
        let tag = notModified.headerFields[.eTag].flatMap(EntityTag.init)
        if let tag, !tag.isWeak {
            return stored.indices.filter { index in
                stored[index].response.headerFields[.eTag].flatMap(EntityTag.init).map { tag.strongMatches($0) }
                    ?? false
            }
        }
        let modified = notModified.headerFields[.lastModified]
        if tag != nil || modified != nil {
            let matching = stored.indices.filter { index in
                let response = stored[index].response
                if let tag {
                    return response.headerFields[.eTag].flatMap(EntityTag.init).map { tag.weakMatches($0) } ?? false
                }
                return response.headerFields[.lastModified] == modified
            }
            return matching.max { stored[$0].storedAt < stored[$1].storedAt }.map { [$0] } ?? []
        }
        guard stored.count == 1, let only = stored.first,
            only.response.headerFields[.eTag] == nil, only.response.headerFields[.lastModified] == nil
        else { return [] }
        return [0]
    }

    /// Which of `stored` a 304 updates when it answers the cache's own conditional request, which
    /// carried the validators of `stored[asked]` alone: §4.3.4's selection
    /// (``storedResponsesUpdated(by:among:)``), except that a 304 repeating no validator at all
    /// updates `stored[asked]` when it is the resource's only stored response.
    ///
    /// A deliberate departure from the section's letter, which lets such a 304 update only a
    /// stored response without a validator: many origins answer 304 without repeating `ETag` or
    /// `Last-Modified` (RFC 9110 §15.4.5 notwithstanding), and every widely used cache (Squid,
    /// Traffic Server, httpd, Varnish, nginx, Fastly, Chrome, Firefox, Safari) freshens the stored
    /// response from it. When the request carried exactly one stored response's validators and
    /// the resource has no other, the 304 can only be answering for that response; sending the
    /// request again, unconditionally, would double every revalidation's origin requests. Where
    /// the selection decides something (several stored variants, or a client's own conditional
    /// request passed through), the strict rule stands.
    public static func storedResponsesUpdated(
        byAnswerTo notModified: HTTPResponse, askingFor asked: Int, among stored: [StoredResponse]
    ) -> [Int] {
        let selected = storedResponsesUpdated(by: notModified, among: stored)
        guard selected.isEmpty, stored.count == 1, asked == 0,
            notModified.headerFields[.eTag] == nil, notModified.headerFields[.lastModified] == nil
        else { return selected }
        return [0]
    }

    /// Whether a 200 response to HEAD may update `stored`, a stored GET response it could have
    /// been chosen for (§4.3.5): every validator the HEAD response carries (`ETag` and
    /// `Last-Modified`) has the stored one's value, at least one is present, and its
    /// `Content-Length`, when it has one and names the stored response's `Content-Encoding`,
    /// equals the stored response's. Otherwise the stored response should be considered stale.
    public static func headResponse(_ response: HTTPResponse, updates stored: StoredResponse) -> Bool {
        guard response.status.code == 200 else { return false }
        let tag = response.headerFields[.eTag]
        let modified = response.headerFields[.lastModified]
        guard tag != nil || modified != nil else { return false }
        if let tag {
            guard let newTag = EntityTag(tag),
                let storedTag = stored.response.headerFields[.eTag].flatMap(EntityTag.init),
                // "Matching values", not a strong comparison: `W/"v1"` matches `W/"v1"` (and
                // not `"v1"`), or no weak validator could ever freshen what it validates.
                newTag == storedTag
            else { return false }
        }
        if let modified, stored.response.headerFields[.lastModified] != modified { return false }
        // Lengths of one coding only: a client that decodes content (URLSession) stores the
        // decoded body without `Content-Encoding`, while a HEAD still names the server's coding
        // and its encoded length, which says nothing of a change.
        if let length = response.headerFields[.contentLength],
            response.headerFields[values: .contentEncoding] == stored.response.headerFields[values: .contentEncoding]
        {
            let storedLength = stored.response.headerFields[.contentLength].flatMap(Int.init) ?? stored.body.count
            guard Int(length) == storedLength else { return false }
        }
        return true
    }

    /// Fields a 304 must not overwrite in the stored response (§3.2): its framing, which
    /// describes the 304's empty body, not the stored content.
    static let fieldsKeptOnFreshen: Set<HTTPField.Name> = [
        .contentLength, .transferEncoding, .contentEncoding, .contentRange,
    ]

    /// `stored`, with the header fields of a 304 merged in (§3.2, §4.3.4) and the new exchange's
    /// times: a revalidated response ages from the revalidation.
    public static func freshen(
        _ stored: StoredResponse, with notModified: HTTPResponse, requestTime: Date, responseTime: Date
    ) -> StoredResponse {
        var updated = stored
        var fields = updating(stored.response.headerFields, with: notModified.headerFields, except: fieldsKeptOnFreshen)
        // A 304 without Date gets the time it arrived (RFC 9110 §6.6.1): the stored Date would
        // otherwise age the freshened response from its first download.
        if notModified.headerFields[.date] == nil { fields[.date] = HTTPDate.format(responseTime) }
        updated.response.headerFields = fields
        updated.requestTime = requestTime
        updated.responseTime = responseTime
        updated.storedAt = responseTime
        // The origin confirmed it: a soft purge's mark is answered.
        updated.invalidatedAt = nil
        return updated
    }
}

extension Validation {
    /// `stored`'s header fields with each field `newer` has (but `kept` and hop-by-hop ones)
    /// replacing the stored field of that name (RFC 9111 §3.2, §3.4): what a 304 or a completing
    /// 206 updates, keeping what it does not repeat.
    ///
    /// All but `Age`: the result ages from the newer exchange (its request and response times),
    /// and `Age` is the time since the origin generated *or validated* the response (§5.1), so a
    /// newer message without one restarts it. The stored `Age` kept would count again on top of
    /// the new times: a response stored with `Age` past its lifetime was stale again the moment
    /// it was revalidated, and revalidated on every request.
    ///
    /// Where a targeted field stands in for the stored `Cache-Control` (the origin's own set
    /// aside, ``TargetedCacheControl/originCacheControlField``) and `newer` does not repeat the
    /// targeted field, `newer`'s `Cache-Control` and `Expires` update what was set aside: they
    /// are the origin's directives for other caches. A 304 need not repeat a targeted field (RFC
    /// 9110 §15.4.5 names `Cache-Control` and `Expires`, not `CDN-Cache-Control`), and the one
    /// stored still governs (RFC 9213 §2.2): merged as they came, the browser's `max-age=86400`
    /// gave the proxy a day where `CDN-Cache-Control` said a minute.
    static func updating(
        _ stored: HTTPFields, with newer: HTTPFields, except kept: Set<HTTPField.Name>
    ) -> HTTPFields {
        var fields = stored
        let newer = TargetedCacheControl.settingAsideUntargeted(newer, for: stored)
        if newer[.age] == nil { fields[values: .age] = [] }
        var replaced = Set<HTTPField.Name>()
        for field in newer where !kept.contains(field.name) && !HopByHop.isHopByHop(field.name, in: newer) {
            if replaced.insert(field.name).inserted { fields[values: field.name] = [] }
            fields.append(field)
        }
        return fields
    }
}

/// Hop-by-hop fields (RFC 9110 §7.6.1), which are never stored or forwarded: the fixed set
/// (`Connection`, `Transfer-Encoding`, `Upgrade`, `TE`, `Trailer`, `Keep-Alive`,
/// `Proxy-Connection`, and the proxy authentication fields, which apply "only to the next
/// outbound client" (RFC 9110 §11.7) and which a cache must not store (RFC 9111 §3.1):
/// `Proxy-Authenticate`, `Proxy-Authentication-Info`, `Proxy-Authorization`) and every field a
/// `Connection` field names.
public enum HopByHop {
    /// The fields that are hop-by-hop whatever `Connection` says.
    public static let names: Set<HTTPField.Name> = Set(
        [.connection, .transferEncoding, .upgrade, .te, .trailer, .proxyAuthenticate, .proxyAuthorization]
            + ["Keep-Alive", "Proxy-Connection", "Proxy-Authentication-Info"].compactMap { HTTPField.Name($0) })

    /// Whether `name` is hop-by-hop in a message with `fields`.
    public static func isHopByHop(_ name: HTTPField.Name, in fields: HTTPFields) -> Bool {
        if names.contains(name) { return true }
        return fields[values: .connection].contains { value in
            DirectiveParser.fieldNames(value).contains(name.canonicalName)
        }
    }

    /// `fields` without hop-by-hop fields (`fields` itself, not a copy, when there are none: the
    /// common case on a proxy's hot path).
    public static func removing(from fields: HTTPFields) -> HTTPFields {
        let connectionValues = fields[values: .connection]
        let named = connectionValues.isEmpty ? [] : Set(connectionValues.flatMap { DirectiveParser.fieldNames($0) })
        func isHopByHop(_ name: HTTPField.Name) -> Bool {
            names.contains(name) || (!named.isEmpty && named.contains(name.canonicalName))
        }
        guard fields.contains(where: { isHopByHop($0.name) }) else { return fields }
        var result = HTTPFields()
        for field in fields where !isHopByHop(field.name) { result.append(field) }
        return result
    }
}
