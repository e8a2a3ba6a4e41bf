import Foundation
import HTTPCaching
import HTTPTypes
import NIOCore

/// `PURGE`, answered by the proxy itself when ``CachingProxy/Configuration/purgeToken`` is set
/// (and forwarded to the origin like any other method when it is not):
///
/// - `PURGE /path` purges that URL (every variant, its HEAD response, its partial content);
/// - `PURGE /` with `Purge-Tags: a b` (space- or comma-separated) purges every response that
///   carried one of those tags (see `HTTPCache.Tagging`);
/// - `Purge-Mode: soft` marks what it covers stale instead of removing it.
///
/// The request must carry `Authorization: Bearer <token>`: without it the answer is 401, with
/// another token 403, and nothing is purged.
extension CachingProxy {
    /// The method the proxy answers for purges.
    public static let purgeMethod = HTTPRequest.Method("PURGE")!
    /// The request field that lists the tags to purge.
    public static let purgeTagsField = HTTPField.Name("Purge-Tags")!
    /// The request field that asks for a soft purge (`soft`) rather than a hard one (`hard`).
    public static let purgeModeField = HTTPField.Name("Purge-Mode")!

    /// The answer to a `PURGE` request; `outgoing` is the request as the cache would see it.
    func purgeAnswer(_ head: HTTPRequest, outgoing: HTTPRequest, token: String) async -> Answer {
        guard let credentials = head.headerFields[.authorization] else {
            var answer = errorAnswer(.unauthorized, "PURGE needs Authorization: Bearer <token>")
            answer.head.headerFields[.wwwAuthenticate] = "Bearer"
            return answer
        }
        guard Self.bearerTokenMatches(credentials, token) else {
            logger.notice("PURGE refused: wrong token", metadata: ["path": "\(head.path ?? "")"])
            return errorAnswer(.forbidden, "the purge token is not this proxy's")
        }
        let mode: HTTPCache.PurgeMode
        switch head.headerFields[Self.purgeModeField]?.lowercased() {
        case nil, "hard": mode = .hard
        case "soft": mode = .soft
        case let other?: return errorAnswer(.badRequest, "Purge-Mode must be hard or soft; got '\(other)'")
        }
        let tags = head.headerFields[values: Self.purgeTagsField].flatMap {
            $0.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" }).map(String.init)
        }
        do {
            let done: String
            if head.headerFields[Self.purgeTagsField] != nil {
                guard !tags.isEmpty else { return errorAnswer(.badRequest, "Purge-Tags lists no tag") }
                try await cache.purge(tags: tags, mode: mode)
                done = "purged \(Set(tags).count) tag(s) (\(mode.rawValue))"
            } else {
                try await cache.purge(target: outgoing, mode: mode)
                done = "purged \(head.path ?? "/") (\(mode.rawValue))"
            }
            let body = ByteBuffer(string: done + "\n")
            let response = HTTPResponse(
                status: .ok,
                headerFields: [
                    .contentType: "text/plain; charset=utf-8", .contentLength: String(body.readableBytes), .via: via,
                ])
            return Answer(head: response, body: .buffered(body), outcome: .purge)
        } catch  where error.code == .invalidRequest {
            return errorAnswer(.badRequest, error.message)
        } catch {
            logger.warning("PURGE failed", metadata: ["error": "\(error)"])
            return errorAnswer(.serviceUnavailable, "the purge was not recorded: \(error.message)")
        }
    }

    /// Whether `credentials` is `Bearer <token>`, compared in time independent of where the
    /// first difference lies (a token must not leak one byte at a time).
    static func bearerTokenMatches(_ credentials: String, _ token: String) -> Bool {
        let parts = credentials.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return false }
        let given = Array(parts[1].trimmingCharacters(in: .whitespaces).utf8), expected = Array(token.utf8)
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for index in 0..<max(given.count, expected.count) {
            let left = index < given.count ? given[index] : 0
            let right = index < expected.count ? expected[index] : 0xFF
            difference |= left ^ right
        }
        return difference == 0
    }
}
