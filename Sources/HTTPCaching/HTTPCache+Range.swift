import Foundation
import HTTPTypes

/// Range requests (RFC 9110 §14): the engine answers a GET for one byte range from the complete
/// response, stored or fetched. The `Range` and `If-Range` fields are taken out of the request,
/// so the origin is asked for (and the cache keeps) the whole representation, and the answer is
/// cut to the range: 206 with `Content-Range`, or 416 when the range is unsatisfiable. A range the
/// engine does not serve (several ranges, another unit, invalid syntax), an `If-Range` that does
/// not match, or an answer other than 200 goes back whole, as §14.2 allows.
extension HTTPCache {
    func respondToRange(
        _ request: HTTPRequest, body: Data?, cachePolicy: RequestCachePolicy, transport: @escaping Transport
    ) async throws -> HTTPCacheResponse {
        var whole = request
        let rangeValue = request.headerFields[values: .range].joined(separator: ", ")
        let ifRange = request.headerFields[.ifRange]
        whole.headerFields[values: .range] = []
        whole.headerFields[values: .ifRange] = []
        let result = try await response(for: whole, body: body, cachePolicy: cachePolicy, transport: transport)
        guard result.response.status.code == 200, let range = ByteRange(rangeField: rangeValue) else { return result }
        if let ifRange, !ByteRange.ifRange(ifRange, allowsRangeOf: result.response) { return result }
        return Self.partial(result, range: range)
    }

    /// `whole` (a 200) cut to `range`: 206 with `Content-Range: bytes first-last/length`, or 416
    /// with `Content-Range: bytes */length` (RFC 9110 §14.4, §15.3.7, §15.5.17).
    static func partial(_ whole: HTTPCacheResponse, range: ByteRange) -> HTTPCacheResponse {
        var answer = whole
        let length = whole.body.count
        guard let bounds = range.bounds(in: length) else {
            answer.response.status = .rangeNotSatisfiable
            answer.response.headerFields[.contentRange] = "bytes */\(length)"
            answer.response.headerFields[.contentLength] = "0"
            answer.body = Data()
            return answer
        }
        answer.response.status = .partialContent
        answer.response.headerFields[.contentRange] = "bytes \(bounds.lowerBound)-\(bounds.upperBound)/\(length)"
        answer.response.headerFields[.contentLength] = String(bounds.count)
        answer.body = whole.body.subdata(in: (whole.body.startIndex + bounds.lowerBound)..<(whole.body.startIndex + bounds.upperBound + 1))
        return answer
    }
}
