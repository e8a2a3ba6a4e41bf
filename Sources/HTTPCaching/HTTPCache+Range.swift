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

    /// Stored partial content with the bytes it holds: its `Content-Range`, parsed once.
    struct StoredPart {
        let located: Located
        let content: ContentRange

        /// The part's entity tag; nil when it has no `ETag` or an invalid one. Parsed when asked
        /// (only on the way to the origin), not at lookup: an answer cut from the part needs none.
        var tag: EntityTag? { located.response.response.headerFields[.eTag].flatMap(EntityTag.init) }
    }

    /// The resource's stored partial content, if any and whole. A part whose body is not as long
    /// as its `Content-Range` says (a store hook changed the body, or another writer of a shared
    /// tier did) is not used, as if absent: cutting an answer from it, or combining it with a new
    /// part, would index past its bytes.
    func lookupPartial(_ primaryKey: CacheKey, request: HTTPRequest) async -> StoredPart? {
        guard let partial = await lookupResource(Self.partialKey(primaryKey), request: request),
            let content = partial.response.response.headerFields[.contentRange].flatMap(ContentRange.init(field:)),
            partial.response.body.count == content.bounds.count
        else { return nil }
        return StoredPart(located: partial, content: content)
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
        let directives = requestDirectives(of: whole)
        if let partial = await lookupPartial(primaryKey, request: whole) {
            if let answer = answerFromPartial(partial, request: whole, range: range, ifRange: ifRange) {
                return answer
            }
            // A client's own If-Range is left to the whole-range path below, and so is a request
            // that must not be stored or must not reach the origin.
            if ifRange == nil, !directives.noStore, !directives.onlyIfCached,
                let tag = partial.tag,
                let missing = Self.missingPart(of: range, besides: partial.content, tag: tag),
                let answer = try await complete(
                    partial, missing: missing, tag: tag, for: whole, range: range, ifRange: ifRange,
                    primaryKey: primaryKey, transport: transport)
            {
                return answer
            }
        }
        if directives.onlyIfCached {
            // Nothing stored answers the range, and the origin may not be asked.
            return unsatisfiable()
        }
        counters.recordMiss()
        let exchange = try await fetch(request, body: nil, transport: transport)
        switch exchange.response.status.code {
        case 206:
            var result = HTTPCacheResponse(response: exchange.response, body: exchange.body, source: .network)
            if exchange.claimsStore() {
                result.wasStored = await storePartial(exchange, for: whole, primaryKey: primaryKey)
            }
            return result
        case 200:
            var result = HTTPCacheResponse(response: exchange.response, body: exchange.body, source: .network)
            if exchange.claimsStore() {
                result.wasStored = await storeIfAllowed(exchange, for: whole, primaryKey: primaryKey)
            }
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
        _ part: StoredPart, request: HTTPRequest, range: ByteRange, ifRange: String?
    ) -> HTTPCacheResponse? {
        let stored = part.content
        guard let wanted = range.bounds(in: stored.completeLength),
            stored.bounds.lowerBound <= wanted.lowerBound, wanted.upperBound <= stored.bounds.upperBound,
            ifRange.map({ ByteRange.ifRange($0, allowsRangeOf: part.located.response.response) }) ?? true,
            let measure = usableWithoutNetwork(request, stored: part.located, cachePolicy: .useProtocolCachePolicy)
        else { return nil }
        return Self.partialAnswer(
            served(part.located, source: .cache, request: request, now: measure.now, measure: measure),
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

    /// Completes stored partial content `partial` for `range` (`nil`: the whole representation)
    /// by asking the origin for the `missing` bytes only, made conditional on the stored part's
    /// strong entity tag with `If-Range` (RFC 9111 §3.4, RFC 9110 §13.1.5): a 206 means the
    /// representation is unchanged, so the stored bytes stand (stale or not), and the answer is
    /// cut from the two parts combined in memory (stored as well, when the response may be). A 200
    /// (the representation changed, or the origin ignores ranges) is stored whole and cut; any
    /// other status is the answer as it is. `nil` only when the origin's answer cannot answer the
    /// request: a 416 (the stored length is outdated) or a 206 that does not cover the range. The
    /// caller then asks as it would have without the stored part.
    private func complete(
        _ partial: StoredPart, missing: ClosedRange<Int>, tag: EntityTag, for whole: HTTPRequest, range: ByteRange?,
        ifRange: String?, primaryKey: CacheKey, transport: @escaping Transport
    ) async throws -> HTTPCacheResponse? {
        var outgoing = whole
        outgoing.headerFields[.range] = "bytes=\(missing.lowerBound)-\(missing.upperBound)"
        outgoing.headerFields[.ifRange] = tag.description
        let exchange = try await fetch(outgoing, body: nil, transport: transport)
        switch exchange.response.status.code {
        case 206:
            // Combined with the part it completes or, another representation's part from an origin
            // that ignored If-Range, alone: either way one representation's bytes, answered when
            // they hold what was asked (the whole for a plain GET, the range's bytes otherwise).
            guard let (combined, content) = Self.partialContent(of: exchange, with: partial) else {
                return nil
            }
            let answerFrom: (HTTPCacheResponse) -> HTTPCacheResponse
            if content.bounds.count == content.completeLength {
                answerFrom = { whole in range.map { Self.cut(whole, to: $0, ifRange: ifRange) } ?? whole }
            } else if let range, let wanted = range.bounds(in: content.completeLength),
                content.bounds.lowerBound <= wanted.lowerBound, wanted.upperBound <= content.bounds.upperBound
            {
                answerFrom = {
                    Self.partialAnswer(
                        $0, bodyStartsAt: content.bounds.lowerBound, wanted: wanted,
                        completeLength: content.completeLength)
                }
            } else {
                return nil
            }
            counters.recordMiss()
            var answer = HTTPCacheResponse(response: combined.response, body: combined.body, source: .network)
            if exchange.claimsStore() {
                answer.wasStored = await storeCombined(combined, content: content, for: whole, primaryKey: primaryKey)
            }
            return answerFrom(answer)
        case 416:
            return nil
        case let code:
            counters.recordMiss()
            var result = HTTPCacheResponse(response: exchange.response, body: exchange.body, source: .network)
            guard code == 200, exchange.claimsStore() else { return result }
            result.wasStored = await storeIfAllowed(exchange, for: whole, primaryKey: primaryKey)
            return range.map { Self.cut(result, to: $0, ifRange: ifRange) } ?? result
        }
    }

    /// The complete response for a plain GET built from stored partial content that lacks bytes
    /// at one end only: those bytes are asked of the origin (as for a range, with `If-Range`) and
    /// the whole answered once the parts combine. `nil` when there is no such stored part, or
    /// when the origin's answer does not complete it (the caller then fetches as usual).
    func completeStoredPart(
        _ request: HTTPRequest, primaryKey: CacheKey, transport: @escaping Transport
    ) async throws -> HTTPCacheResponse? {
        guard let partial = await lookupPartial(primaryKey, request: request),
            let tag = partial.tag,
            let missing = Self.missingPart(of: .from(first: 0, last: nil), besides: partial.content, tag: tag)
        else { return nil }
        return try await complete(
            partial, missing: missing, tag: tag, for: request, range: nil, ifRange: nil, primaryKey: primaryKey,
            transport: transport)
    }

    /// Stores a 206 as partial content (RFC 9111 §3.3), combined with the stored partial content
    /// as ``partialContent(of:with:)`` says; content that covers the whole representation is
    /// stored as a complete 200. Returns whether anything was stored.
    func storePartial(_ exchange: Exchange, for request: HTTPRequest, primaryKey: CacheKey) async -> Bool {
        let existing = await lookupPartial(primaryKey, request: request)
        guard let (combined, content) = Self.partialContent(of: exchange, with: existing) else {
            return false
        }
        return await storeCombined(combined, content: content, for: request, primaryKey: primaryKey)
    }

    /// Stores partial content ``partialContent(of:with:)`` made: beside the resource, or as the
    /// complete response (removing the part) when it covers the whole representation.
    private func storeCombined(
        _ combined: Exchange, content: ContentRange, for request: HTTPRequest, primaryKey: CacheKey
    ) async -> Bool {
        guard content.bounds.count == content.completeLength else {
            return await storeIfAllowed(
                combined, for: request, primaryKey: Self.partialKey(primaryKey), partialContent: true)
        }
        // The part goes once the whole is kept: a whole the cache refuses (a cookie it sets, in
        // a shared cache) leaves the part as it was.
        let kept = await storeIfAllowed(combined, for: request, primaryKey: primaryKey)
        if kept { await removeResource(Self.partialKey(primaryKey)) }
        return kept
    }

    /// `exchange` (a 206) as the partial content it makes with the stored `part`: the two
    /// combined when both carry the same strong entity tag and complete length and their ranges
    /// overlap or adjoin (§3.4), the stored part's header fields updated by the 206's (a 206 that
    /// answers `If-Range` need not repeat `Content-Type` or `Content-Encoding`, RFC 9110 §15.3.7);
    /// otherwise the 206 alone. Content that covers the whole representation is a 200. `nil` for a
    /// 206 that cannot be stored as partial content: not one `Content-Range` of known length
    /// matching its body, or no strong entity tag (which combining needs).
    static func partialContent(
        of exchange: Exchange, with part: StoredPart?
    ) -> (exchange: Exchange, content: ContentRange)? {
        guard var content = exchange.response.headerFields[.contentRange].flatMap(ContentRange.init(field:)),
            exchange.body.count == content.bounds.count,
            let tag = exchange.response.headerFields[.eTag].flatMap(EntityTag.init), !tag.isWeak
        else { return nil }
        var combined = exchange
        if let existing = part?.located.response, let storedRange = part?.content,
            let storedTag = part?.tag,
            storedTag.strongMatches(tag), storedRange.completeLength == content.completeLength,
            storedRange.bounds.lowerBound <= content.bounds.upperBound + 1,
            content.bounds.lowerBound <= storedRange.bounds.upperBound + 1
        {
            (content, combined.body) = Self.combined(storedRange, existing.body, content, exchange.body)
            combined.response.headerFields = Validation.updating(
                existing.response.headerFields, with: exchange.response.headerFields,
                except: [.contentLength, .contentRange, .transferEncoding])
            // The same representation: a 206 that names no tags keeps the stored part's.
            if exchange.tags.tags.isEmpty, exchange.tags.refusal == nil { combined.tags.tags = existing.tags }
        }
        combined.response.headerFields[.contentLength] = String(combined.body.count)
        if content.bounds.count == content.completeLength {
            combined.response.status = .ok
            combined.response.headerFields[values: .contentRange] = []
        } else {
            combined.response.headerFields[.contentRange] = content.fieldValue
        }
        return (combined, content)
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
