import Foundation
import HTTPCaching
import HTTPTypes

/// A client's own conditional GET or HEAD (`If-None-Match`, `If-Modified-Since`), which the
/// proxy takes out of the request, so that the cache sees a plain request, and evaluates against
/// the response it is about to send: a stored response that matches is answered with 304 without
/// asking the origin (RFC 9111 §4.3.2, RFC 9110 §13.2.2).
struct ClientPreconditions: Sendable {
    var ifNoneMatch: [String]
    var ifModifiedSince: Date?

    /// The fields a 304 carries from the response it stands for (RFC 9110 §15.4.5), and the
    /// cache's own.
    static let fieldsKeptIn304: [HTTPField.Name] = [
        .cacheControl, .contentLocation, .date, .eTag, .expires, .vary, .age, .lastModified,
    ]

    /// Takes the preconditions out of `request`; `nil` when it has none (or is not a GET or HEAD,
    /// whose preconditions the origin evaluates).
    static func extract(from request: inout HTTPRequest) -> ClientPreconditions? {
        guard request.method == .get || request.method == .head else { return nil }
        let noneMatch = request.headerFields[values: .ifNoneMatch]
        let modifiedSince = request.headerFields[.ifModifiedSince]
        guard !noneMatch.isEmpty || modifiedSince != nil else { return nil }
        request.headerFields[values: .ifNoneMatch] = []
        request.headerFields[values: .ifModifiedSince] = []
        let tags = noneMatch.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        return ClientPreconditions(ifNoneMatch: tags, ifModifiedSince: modifiedSince.flatMap { HTTPDate.parse($0) })
    }

    /// Whether `response` (a 200 the proxy would send) makes the client's condition false, so
    /// that 304 Not Modified is the answer. `If-None-Match` uses the weak comparison and, when
    /// present, `If-Modified-Since` is ignored (RFC 9110 §13.1.2, §13.1.3).
    func notModified(_ response: HTTPResponse) -> Bool {
        guard response.status.code == 200 else { return false }
        if !ifNoneMatch.isEmpty {
            if ifNoneMatch.contains("*") { return true }
            guard let current = response.headerFields[.eTag].flatMap(EntityTag.init) else { return false }
            return ifNoneMatch.contains { EntityTag($0)?.weakMatches(current) == true }
        }
        guard let since = ifModifiedSince,
              let lastModified = response.headerFields[.lastModified].flatMap({ HTTPDate.parse($0) })
        else { return false }
        return lastModified <= since
    }

    /// The 304 that stands for `response`.
    static func notModifiedResponse(for response: HTTPResponse) -> HTTPResponse {
        var fields = HTTPFields()
        for name in fieldsKeptIn304 {
            for value in response.headerFields[values: name] { fields.append(HTTPField(name: name, value: value)) }
        }
        return HTTPResponse(status: .notModified, headerFields: fields)
    }
}
