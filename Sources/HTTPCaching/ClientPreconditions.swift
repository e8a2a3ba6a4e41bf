import Foundation
import HTTPTypes

/// A client's own conditional GET or HEAD (`If-None-Match`, `If-Modified-Since`), which the
/// cache takes out of the request, so that it looks up and revalidates as for a plain request,
/// and evaluates against the response it is about to send: a response that matches is answered
/// with 304 (RFC 9111 §4.3.2, RFC 9110 §13.2.2). ``HTTPCache`` does this for every request; the
/// caching proxy uses it for the requests it forwards past the cache.
public struct ClientPreconditions: Sendable, Hashable {
    /// The entity tags of `If-None-Match`, as sent (`*` included).
    public var ifNoneMatch: [String]
    /// The date of `If-Modified-Since`, if it was valid.
    public var ifModifiedSince: Date?

    /// The fields a 304 carries from the response it stands for (RFC 9110 §15.4.5), and the
    /// cache's own.
    public static let fieldsKeptIn304: [HTTPField.Name] = [
        .cacheControl, .contentLocation, .date, .eTag, .expires, .vary, .age, .lastModified,
    ]

    /// Takes the preconditions out of `request`; `nil` when it has none (or is not a GET or HEAD,
    /// whose preconditions the origin evaluates).
    public static func extract(from request: inout HTTPRequest) -> ClientPreconditions? {
        guard request.method == .get || request.method == .head, isPresent(in: request) else { return nil }
        let noneMatch = request.headerFields[values: .ifNoneMatch]
        let modifiedSince = request.headerFields[.ifModifiedSince]
        request.headerFields[values: .ifNoneMatch] = []
        request.headerFields[values: .ifModifiedSince] = []
        return ClientPreconditions(
            ifNoneMatch: entityTags(in: noneMatch), ifModifiedSince: modifiedSince.flatMap { HTTPDate.parse($0) })
    }

    /// Whether `request` carries `If-None-Match` or `If-Modified-Since` (two field scans, no
    /// allocation: the engine asks on every request).
    @inline(__always)
    public static func isPresent(in request: HTTPRequest) -> Bool {
        request.headerFields[.ifNoneMatch] != nil || request.headerFields[.ifModifiedSince] != nil
    }

    /// The members of `If-None-Match` field lines, trimmed, empty ones dropped: split at the
    /// commas outside an entity tag's quotes, since a tag may hold commas (`"a,b"`, RFC 9110
    /// §8.8.3; a backslash there is a character, not an escape).
    private static func entityTags(in values: [String]) -> [String] {
        var tags: [String] = []
        for value in values {
            var member = Substring(), quoted = false
            func endMember() {
                let trimmed = member.trimmingCharacters(in: .whitespaces)
                if !trimmed.isEmpty { tags.append(trimmed) }
                member = ""
            }
            for character in value {
                if character == "\"" { quoted.toggle() }
                if character == ",", !quoted { endMember() } else { member.append(character) }
            }
            endMember()
        }
        return tags
    }

    /// Whether the client's `If-None-Match` names `tag` (`*`, or a weak match, RFC 9110 §13.1.2).
    private func ifNoneMatchNames(_ tag: EntityTag) -> Bool {
        ifNoneMatch.contains { $0 == "*" || EntityTag($0)?.weakMatches(tag) == true }
    }

    /// Whether `response` (a 200 the proxy would send) makes the client's condition false, so
    /// that 304 Not Modified is the answer. `If-None-Match` uses the weak comparison and, when
    /// present, `If-Modified-Since` is ignored (RFC 9110 §13.1.2, §13.1.3). `If-Modified-Since`
    /// is compared with `Last-Modified`; for a response from storage (`isStored`) without one,
    /// with its `Date` (RFC 9111 §4.3.2: the stored response is no newer than that), and a
    /// response with neither is sent in full.
    public func notModified(_ response: HTTPResponse, isStored: Bool = false) -> Bool {
        guard response.status.code == 200 else { return false }
        if !ifNoneMatch.isEmpty {
            if ifNoneMatch.contains("*") { return true }
            guard let current = response.headerFields[.eTag].flatMap(EntityTag.init) else { return false }
            return ifNoneMatchNames(current)
        }
        let modified = response.headerFields[.lastModified] ?? (isStored ? response.headerFields[.date] : nil)
        guard let since = ifModifiedSince, let lastModified = modified.flatMap({ HTTPDate.parse($0) }) else {
            return false
        }
        return lastModified <= since
    }

    /// `request` (the cache's own request to the origin) with these preconditions merged in
    /// (RFC 9111 §4.3.2: a cache may add its own validators to a client's): the entity tags of
    /// both in `If-None-Match`, so that a 304 can confirm either representation, and in
    /// `If-Modified-Since` the earlier of the two dates: "not modified since" the earlier is true
    /// of the later too, so a 304 then confirms both copies. (Sent the cache's later date, a 304
    /// said nothing of a client's older copy, which was told it was current.)
    public func merged(into request: HTTPRequest) -> HTTPRequest {
        var merged = request
        var tags = Self.entityTags(in: request.headerFields[values: .ifNoneMatch])
        for tag in ifNoneMatch where !tags.contains(tag) { tags.append(tag) }
        if !tags.isEmpty { merged.headerFields[.ifNoneMatch] = tags.joined(separator: ", ") }
        if let ifModifiedSince {
            let own = merged.headerFields[.ifModifiedSince].flatMap { HTTPDate.parse($0) }
            if own.map({ ifModifiedSince < $0 }) ?? true {
                merged.headerFields[.ifModifiedSince] = HTTPDate.format(ifModifiedSince)
            }
        }
        return merged
    }

    /// `request` with these preconditions put back as the client sent them (for a caller that
    /// took them out with ``extract(from:)`` and then leaves them to another party).
    public func restored(into request: HTTPRequest) -> HTTPRequest {
        var restored = request
        restored.headerFields[values: .ifNoneMatch] = ifNoneMatch.isEmpty ? [] : [ifNoneMatch.joined(separator: ", ")]
        restored.headerFields[.ifModifiedSince] = ifModifiedSince.map { HTTPDate.format($0) }
        return restored
    }

    /// Whether a 304 to `sent` (a merged request, ``merged(into:)``) confirms the client's
    /// representation: its `ETag` matches one the client sent (weakly, as `If-None-Match`
    /// compares), or it has none, the client asked by date alone, and the origin judged a date no
    /// later than the client's: `sent` carried no `If-None-Match` (which the origin evaluates
    /// instead of the date) and an `If-Modified-Since` at or before the client's.
    public func isConfirmed(by notModified: HTTPResponse, answering sent: HTTPRequest) -> Bool {
        guard notModified.status.code == 304 else { return false }
        guard let tag = notModified.headerFields[.eTag].flatMap(EntityTag.init) else {
            guard ifNoneMatch.isEmpty, let ifModifiedSince, sent.headerFields[.ifNoneMatch] == nil,
                let judged = sent.headerFields[.ifModifiedSince].flatMap({ HTTPDate.parse($0) })
            else { return false }
            return judged <= ifModifiedSince
        }
        return ifNoneMatchNames(tag)
    }

    /// The 304 that stands for `response`.
    public static func notModifiedResponse(for response: HTTPResponse) -> HTTPResponse {
        var fields = HTTPFields()
        for name in fieldsKeptIn304 {
            for value in response.headerFields[values: name] { fields.append(HTTPField(name: name, value: value)) }
        }
        return HTTPResponse(status: .notModified, headerFields: fields)
    }
}
