import Foundation
import HTTPTypes
import TierCache

/// Range requests (RFC 9110 §14, RFC 9111 §3.3–3.4). A GET for one byte range is answered:
/// - from a complete stored response, cut to the range (a stale one is revalidated first);
/// - else from stored partial content that covers the range;
/// - else, when stored partial content lacks only the bytes past its end or before its start,
///   by asking the origin for those bytes alone, conditional on the stored part's strong entity
///   tag (`If-Range`), and answering from the two parts combined (§3.4);
/// - else by asking the origin for the range: a 206 is stored as partial content (combined with
///   the stored part when their strong entity tags match and the two overlap or adjoin; a
///   combination that covers the whole representation becomes a complete stored response), and a
///   200 (an origin that ignores ranges) is stored whole and cut.
///
/// The answer is 206 with `Content-Range`, or 416 when the range is unsatisfiable. A `Range` the
/// engine does not serve (several ranges, another unit, invalid syntax) or an `If-Range` that does
/// not match gets the whole response, as §14.2 allows. A client's own `If-None-Match` /
/// `If-Modified-Since` goes first (§13.2.2): such requests take the complete-response path.
extension HTTPCache {
    /// Where a resource's partial content is kept: beside its primary key.
    static func partialKey(_ primaryKey: CacheKey) -> CacheKey {
        CacheKey(primaryKey, appending: "\u{1F}partial")
    }

    func respondToRange(
        _ request: HTTPRequest, body: Data?, cachePolicy: RequestCachePolicy, transport: @escaping Transport
    ) async throws -> HTTPCacheResponse {
        var whole = request
        let rangeValue = request.headerFields[values: .range].joined(separator: ", ")
        let ifRange = request.headerFields[.ifRange]
        whole.headerFields[values: .range] = []
        whole.headerFields[values: .ifRange] = []
        guard let range = ByteRange(rangeField: rangeValue) else {
            return try await response(for: whole, body: body, cachePolicy: cachePolicy, transport: transport)
        }
        guard !ClientPreconditions.isPresent(in: whole), cachePolicy == .useProtocolCachePolicy,
            let primaryKey = primaryKey(for: whole)
        else {
            return try await cutFromWhole(
                whole, range: range, ifRange: ifRange, body: body, cachePolicy: cachePolicy, transport: transport)
        }
        if let stored = await lookup(primaryKey: primaryKey, request: whole) {
            // A complete response: cut as it is when it may be used (the one lookup of a hit),
            // else revalidated or fetched along the plain path first.
            guard let measure = usableWithoutNetwork(whole, stored: stored, cachePolicy: cachePolicy) else {
                return try await cutFromWhole(
                    whole, range: range, ifRange: ifRange, body: body, cachePolicy: cachePolicy, transport: transport)
            }
            return Self.cut(
                served(stored, source: .cache, request: whole, now: measure.now, measure: measure), to: range,
                ifRange: ifRange)
        }
        if let partial = await lookupResource(Self.partialKey(primaryKey), request: whole) {
            if let answer = answerFromPartial(partial, request: whole, range: range, ifRange: ifRange) {
                return answer
            }
            let headers = partial.response.response.headerFields
            // A client's own If-Range is left to the whole-range path below.
            if ifRange == nil, let content = headers[.contentRange].flatMap(ContentRange.init(field:)),
                let tag = headers[.eTag].flatMap(EntityTag.init),
                let missing = Self.missingPart(of: range, besides: content, tag: tag),
                let answer = try await complete(
                    missing: missing, tag: tag, for: whole, range: range, ifRange: ifRange,
                    primaryKey: primaryKey, transport: transport)
            {
                return answer
            }
        }
        counters.recordMiss()
        let exchange = try await fetch(request, body: nil, transport: transport)
        switch exchange.response.status.code {
        case 206:
            var result = HTTPCacheResponse(response: exchange.response, body: exchange.body, source: .network)
            result.wasStored = await storePartial(exchange, for: whole, primaryKey: primaryKey)
            return result
        case 200:
            var result = HTTPCacheResponse(response: exchange.response, body: exchange.body, source: .network)
            result.wasStored = await storeIfAllowed(exchange, for: whole, primaryKey: primaryKey)
            return Self.cut(result, to: range, ifRange: ifRange)
        default:
            return HTTPCacheResponse(response: exchange.response, body: exchange.body, source: .network)
        }
    }

    /// The complete response for `whole` (from storage, revalidated, or fetched), cut to `range`.
    private func cutFromWhole(
        _ whole: HTTPRequest, range: ByteRange, ifRange: String?, body: Data?, cachePolicy: RequestCachePolicy,
        transport: @escaping Transport
    ) async throws -> HTTPCacheResponse {
        Self.cut(
            try await response(for: whole, body: body, cachePolicy: cachePolicy, transport: transport), to: range,
            ifRange: ifRange)
    }

    /// `whole` cut to `range` when it is a complete 200 and `ifRange` (if any) allows; otherwise
    /// `whole` as it is.
    static func cut(_ whole: HTTPCacheResponse, to range: ByteRange, ifRange: String?) -> HTTPCacheResponse {
        guard whole.response.status.code == 200 else { return whole }
        if let ifRange, !ByteRange.ifRange(ifRange, allowsRangeOf: whole.response) { return whole }
        return partial(whole, range: range)
    }

    /// The answer from stored partial content, when it may be used without the origin and holds
    /// every byte of the range.
    private func answerFromPartial(
        _ partial: Located, request: HTTPRequest, range: ByteRange, ifRange: String?
    ) -> HTTPCacheResponse? {
        guard let stored = partial.response.response.headerFields[.contentRange].flatMap(ContentRange.init(field:)),
            let wanted = range.bounds(in: stored.completeLength),
            stored.bounds.lowerBound <= wanted.lowerBound, wanted.upperBound <= stored.bounds.upperBound,
            ifRange.map({ ByteRange.ifRange($0, allowsRangeOf: partial.response.response) }) ?? true,
            let measure = usableWithoutNetwork(request, stored: partial, cachePolicy: .useProtocolCachePolicy)
        else { return nil }
        return Self.partialAnswer(
            served(partial, source: .cache, request: request, now: measure.now, measure: measure),
            bodyStartsAt: stored.bounds.lowerBound, wanted: wanted, completeLength: stored.completeLength)
    }

    /// The bytes to ask the origin for so that stored partial content covers `range`: the part of
    /// the range past the stored part's end, or before its start, when only one side is missing
    /// (with both, or with a gap between them, the whole range is asked for as before). `nil` when
    /// the stored part has no strong entity tag to make the request conditional with.
    static func missingPart(
        of range: ByteRange, besides stored: ContentRange, tag: EntityTag?
    ) -> ClosedRange<Int>? {
        guard let tag, !tag.isWeak, let wanted = range.bounds(in: stored.completeLength) else { return nil }
        let have = stored.bounds
        if wanted.lowerBound >= have.lowerBound, wanted.lowerBound <= have.upperBound + 1,
            wanted.upperBound > have.upperBound
        {
            return (have.upperBound + 1)...wanted.upperBound
        }
        if wanted.upperBound <= have.upperBound, wanted.upperBound + 1 >= have.lowerBound,
            wanted.lowerBound < have.lowerBound
        {
            return wanted.lowerBound...(have.lowerBound - 1)
        }
        return nil
    }

    /// Completes stored partial content for `range` by asking the origin for the missing bytes
    /// only, made conditional on the stored part's strong entity tag with `If-Range` (RFC 9111 §3.4,
    /// RFC 9110 §13.1.5): a 206 means the representation is unchanged, so the stored bytes stand
    /// (stale or not) and the two parts combine; the answer is then cut from the combined content.
    /// A 200 (the representation changed, or the origin ignores ranges) is stored whole and cut.
    /// `nil` when what the origin sent, stored, does not cover the range (or could not be stored):
    /// the caller asks for the whole range.
    private func complete(
        missing: ClosedRange<Int>, tag: EntityTag, for whole: HTTPRequest, range: ByteRange?,
        ifRange: String?, primaryKey: CacheKey, transport: @escaping Transport
    ) async throws -> HTTPCacheResponse? {
        var outgoing = whole
        outgoing.headerFields[.range] = "bytes=\(missing.lowerBound)-\(missing.upperBound)"
        outgoing.headerFields[.ifRange] = tag.description
        counters.recordMiss()
        let exchange = try await fetch(outgoing, body: nil, transport: transport)
        switch exchange.response.status.code {
        case 206:
            // Stored combined with the part it completes, or (another representation's part, from an
            // origin that ignored If-Range) in its place: either way answered if it covers the range.
            guard await storePartial(exchange, for: whole, primaryKey: primaryKey) else { return nil }
            let now = configuration.clock.now()
            if let complete = await lookup(primaryKey: primaryKey, request: whole) {
                let entire = served(complete, source: .network, request: whole, now: now)
                var answer = range.map { Self.cut(entire, to: $0, ifRange: ifRange) } ?? entire
                answer.wasStored = true
                return answer
            }
            guard let range, let combined = await lookupResource(Self.partialKey(primaryKey), request: whole),
                let content = combined.response.response.headerFields[.contentRange].flatMap(ContentRange.init(field:)),
                let wanted = range.bounds(in: content.completeLength), content.bounds.contains(wanted.lowerBound),
                content.bounds.contains(wanted.upperBound)
            else { return nil }
            var answer = Self.partialAnswer(
                served(combined, source: .network, request: whole, now: now), bodyStartsAt: content.bounds.lowerBound,
                wanted: wanted, completeLength: content.completeLength)
            answer.wasStored = true
            return answer
        case 200:
            var result = HTTPCacheResponse(response: exchange.response, body: exchange.body, source: .network)
            result.wasStored = await storeIfAllowed(exchange, for: whole, primaryKey: primaryKey)
            return range.map { Self.cut(result, to: $0, ifRange: ifRange) } ?? result
        default:
            // Not an answer to what was asked (a 416 for an outdated length, an error): the
            // caller asks the origin as it would have without the stored part.
            return nil
        }
    }

    /// The complete response for a plain GET built from stored partial content that lacks bytes
    /// at one end only: those bytes are asked of the origin (as for a range, with `If-Range`) and
    /// the whole answered once the parts combine. `nil` when there is no such stored part, or
    /// when the origin's answer does not complete it (the caller then fetches as usual).
    func completeStoredPart(
        _ request: HTTPRequest, primaryKey: CacheKey, transport: @escaping Transport
    ) async throws -> HTTPCacheResponse? {
        guard let partial = await lookupResource(Self.partialKey(primaryKey), request: request) else { return nil }
        let headers = partial.response.response.headerFields
        guard let content = headers[.contentRange].flatMap(ContentRange.init(field:)),
            let tag = headers[.eTag].flatMap(EntityTag.init),
            let missing = Self.missingPart(of: .from(first: 0, last: nil), besides: content, tag: tag)
        else { return nil }
        return try await complete(
            missing: missing, tag: tag, for: request, range: nil, ifRange: nil, primaryKey: primaryKey,
            transport: transport)
    }

    /// Stores a 206 as partial content (RFC 9111 §3.3), combined with the stored partial content
    /// when both carry the same strong entity tag and their ranges overlap or adjoin (§3.4);
    /// content that then covers the whole representation is stored as a complete 200. A 206
    /// without a single `Content-Range` of known length, or without a strong entity tag (which
    /// combining needs), is not stored. Returns whether anything was stored.
    func storePartial(_ exchange: Exchange, for request: HTTPRequest, primaryKey: CacheKey) async -> Bool {
        guard var content = exchange.response.headerFields[.contentRange].flatMap(ContentRange.init(field:)),
            exchange.body.count == content.bounds.count,
            let tag = exchange.response.headerFields[.eTag].flatMap(EntityTag.init), !tag.isWeak
        else { return false }
        var bytes = exchange.body
        let partialKey = Self.partialKey(primaryKey)
        if let existing = await lookupResource(partialKey, request: request),
            let storedTag = existing.response.response.headerFields[.eTag].flatMap(EntityTag.init),
            storedTag.strongMatches(tag),
            let storedRange = existing.response.response.headerFields[.contentRange].flatMap(ContentRange.init(field:)),
            storedRange.completeLength == content.completeLength,
            storedRange.bounds.lowerBound <= content.bounds.upperBound + 1,
            content.bounds.lowerBound <= storedRange.bounds.upperBound + 1
        {
            (content, bytes) = Self.combined(storedRange, existing.response.body, content, bytes)
        }
        var combined = exchange
        combined.body = bytes
        if content.bounds.count == content.completeLength {
            combined.response.status = .ok
            combined.response.headerFields[values: .contentRange] = []
            combined.response.headerFields[.contentLength] = String(bytes.count)
            await removeResource(partialKey)
            return await storeIfAllowed(combined, for: request, primaryKey: primaryKey)
        }
        combined.response.headerFields[.contentRange] = content.fieldValue
        combined.response.headerFields[.contentLength] = String(bytes.count)
        return await storeIfAllowed(combined, for: request, primaryKey: partialKey, partialContent: true)
    }

    /// Two overlapping or adjoining pieces of one representation as one; where they overlap, the
    /// newer piece's bytes win (they are the same bytes when the entity tags match).
    static func combined(
        _ olderRange: ContentRange, _ older: Data, _ newerRange: ContentRange, _ newer: Data
    ) -> (ContentRange, Data) {
        let lower = min(olderRange.bounds.lowerBound, newerRange.bounds.lowerBound)
        let upper = max(olderRange.bounds.upperBound, newerRange.bounds.upperBound)
        var bytes = Data(count: upper - lower + 1)
        bytes.replaceSubrange(
            (olderRange.bounds.lowerBound - lower)...(olderRange.bounds.upperBound - lower), with: older)
        bytes.replaceSubrange(
            (newerRange.bounds.lowerBound - lower)...(newerRange.bounds.upperBound - lower), with: newer)
        // Both ranges lie within the same complete length, so their union does too.
        let range = ContentRange(bounds: lower...upper, completeLength: newerRange.completeLength) ?? newerRange
        return (range, bytes)
    }

    /// `whole` (a 200) cut to `range`: 206 with `Content-Range: bytes first-last/length`, or 416
    /// with `Content-Range: bytes */length` (RFC 9110 §14.4, §15.3.7, §15.5.17).
    static func partial(_ whole: HTTPCacheResponse, range: ByteRange) -> HTTPCacheResponse {
        let length = whole.body.count
        guard let bounds = range.bounds(in: length) else {
            var answer = whole
            answer.response.status = .rangeNotSatisfiable
            answer.response.headerFields[.contentRange] = "bytes */\(length)"
            answer.response.headerFields[.contentLength] = "0"
            answer.body = Data()
            return answer
        }
        return partialAnswer(whole, bodyStartsAt: 0, wanted: bounds, completeLength: length)
    }

    /// `answer`, whose body holds a representation of `completeLength` bytes from byte `offset`
    /// on, as the 206 for the bytes `wanted`: that slice of the body, with `Content-Range`.
    static func partialAnswer(
        _ answer: HTTPCacheResponse, bodyStartsAt offset: Int, wanted: ClosedRange<Int>, completeLength: Int
    ) -> HTTPCacheResponse {
        var cut = answer
        let start = answer.body.startIndex + wanted.lowerBound - offset
        cut.body = answer.body.subdata(in: start..<(start + wanted.count))
        cut.response.status = .partialContent
        cut.response.headerFields[.contentRange] =
            ContentRange(bounds: wanted, completeLength: completeLength)?.fieldValue
        cut.response.headerFields[.contentLength] = String(wanted.count)
        return cut
    }
}
