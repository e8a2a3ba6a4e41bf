import Foundation
import HTTPTypes
import Logging
import Synchronization
import TierCache

/// The HTTP caching engine: for each request it looks up the tiers, decides with the RFC 9111
/// core, fetches or revalidates through a transport, stores, and says where the answer came from.
///
/// ```swift
/// let cache = HTTPCache(storage: tieredCache)
/// let result = try await cache.response(for: request) { request, body in
///     try await myTransport(request, body)          // (HTTPResponse, Data)
/// }
/// print(result.source, result.age ?? 0)
/// ```
///
/// The transport performs one exchange and throws only when no response arrived (a connection
/// error); HTTP error statuses are responses. Concurrent misses for the same request share one
/// exchange; `stale-while-revalidate` revalidates once in the background.
public final class HTTPCache: Sendable {
    /// Performs one HTTP exchange: the request and its body in, the response and its body out.
    public typealias Transport = @Sendable (HTTPRequest, Data?) async throws -> (HTTPResponse, Data)

    /// The tiers responses are kept in.
    public let storage: TieredCache
    /// The engine's settings.
    public let configuration: Configuration

    let counters: HTTPCacheCounters
    let logger: Logger?
    let generation = Atomic<UInt64>(0)
    let inFlight = InFlightFetches()
    private let background = BackgroundRevalidations()
    private let normalizedKeys = NormalizedKeys()
    let decodedForms: DecodedFormBudget
    let tagLedger: TagLedger
    /// The storage's lowest tier, where tags' purge records live (see ``Tagging``).
    let tagTier: (any CacheTier)?
    /// ``tagTier``, when it can be read without suspending.
    let localTagTier: (any LocalCacheTier)?

    /// A cache that keeps its responses in `storage`'s tiers, by the rules in `configuration`.
    public init(storage: TieredCache, configuration: Configuration = Configuration()) {
        self.storage = storage
        self.configuration = configuration
        self.decodedForms = DecodedFormBudget(limit: configuration.decodedResponsesLimit)
        self.counters = HTTPCacheCounters(metricsFactory: configuration.metricsFactory)
        self.logger = configuration.logger
        self.tagLedger = TagLedger(recheckInterval: configuration.tagging.recheckInterval)
        self.tagTier = storage.tiers.last
        self.localTagTier = storage.tiers.last as? any LocalCacheTier
    }

    /// What the engine has done so far.
    public var statistics: HTTPCacheStatistics { counters.snapshot }

    /// A number that changes whenever the engine writes or removes a stored entry (stores,
    /// revalidations, invalidations; not evictions by a tier), and whenever its storage applies
    /// an invalidation from a shared tier (`TieredCache.invalidate(_:above:)`: another process
    /// changed a key). A front end may reuse an answer it built from a stored response, for at
    /// most the second in which its `Age` is unchanged, while this stays the same (the caching
    /// proxy does, for repeated hits).
    public var storageGeneration: UInt64 { generation.load(ordering: .acquiring) &+ storage.changeCount }

    /// Counts hits a front end answered by reusing an answer this engine gave (see
    /// ``storageGeneration``), so that ``statistics`` still counts every hit.
    public func countReusedHits(_ count: Int = 1) {
        counters.recordHits(count)
    }

    /// Waits until every background revalidation started so far has finished (for tests and
    /// orderly shutdown).
    public func waitForBackgroundRevalidations() async {
        await background.waitForAll()
    }

    private var context: CacheDecision.Context {
        CacheDecision.Context(
            shared: configuration.mode == .shared, heuristics: configuration.heuristics, now: configuration.clock.now())
    }

    // MARK: The request path

    /// Answers `request` from the cache or through `transport`, following RFC 9111 and `cachePolicy`.
    ///
    /// A fresh hit in the memory tiers at the top of the stack is answered on the caller's
    /// executor, without a hop (`nonisolated(nonsending)`): from the main actor it costs what a
    /// synchronous `URLCache` lookup does. Everything else (reading a disk or network tier,
    /// revalidating, fetching, storing) runs on the global concurrent executor, so the caller's
    /// actor never waits for a disk, the network or compression.
    ///
    /// A GET or HEAD with content (`body` not empty, or the request announcing some) is passed
    /// to `transport` with its body, and neither answered from the cache nor stored: the cache
    /// key does not see the content.
    ///
    /// - Throws: the transport's error when the network fails and no stored response may stand
    ///   in; ``HTTPCacheError/Code/notCached`` for ``RequestCachePolicy/returnCacheDataDontLoad``
    ///   without a stored response.
    nonisolated(nonsending) public func response(
        for request: HTTPRequest, body: Data? = nil, cachePolicy: RequestCachePolicy = .useProtocolCachePolicy,
        transport: @escaping Transport
    ) async throws -> HTTPCacheResponse {
        if Self.carriesConnectionNamedFields(request) {
            return try await response(
                for: Self.forwardable(request), body: body, cachePolicy: cachePolicy, transport: transport)
        }
        // A GET or HEAD with content (a search API's query in the body) goes past the cache, with
        // its body: the key cannot see the content, and one query's answer would be stored for
        // every other (it went out without its body, and its answer was kept under the URL).
        guard request.method == .get || request.method == .head, body?.isEmpty ?? true, !request.announcesContent,
            let primaryKey = primaryKey(for: request)
        else {
            return try await forwardUncached(request, body: body, transport: transport)
        }
        if request.method == .get, request.headerFields[.range] != nil {
            return try await respondToRange(request, body: body, cachePolicy: cachePolicy, transport: transport)
        }
        if ClientPreconditions.isPresent(in: request) {
            var plain = request
            if let client = ClientPreconditions.extract(from: &plain) {
                return try await respondToConditional(
                    plain, client: client, cachePolicy: cachePolicy, transport: transport, primaryKey: primaryKey)
            }
        }
        let memoryTiers = storage.leadingMemoryTiers
        var undecided = false
        let inMemory =
            memoryTiers > 0
            ? lookupLocally(primaryKey: primaryKey, request: request, tiers: 0..<memoryTiers, undecided: &undecided)
            : nil
        if let inMemory, let measure = usableWithoutNetwork(request, stored: inMemory, cachePolicy: cachePolicy) {
            // Built in the return statement: an optional response unwrapped here would be
            // copied and destroyed on every hit.
            return served(inMemory, source: .cache, request: request, now: measure.now, measure: measure)
        }
        // An entry whose tags' records must be read from a remote tier is read again there.
        return try await respond(
            to: request, cachePolicy: cachePolicy, transport: transport, primaryKey: primaryKey,
            found: inMemory, searchedTiers: inMemory == nil && !undecided ? memoryTiers : 0)
    }

    /// When RFC 9111 and `cachePolicy` let `stored` answer `request` as it is: the hit is
    /// counted, and its measure (at the decision's `now`) returned for the served response.
    /// `nil` when the origin has to be asked (nothing counted).
    func usableWithoutNetwork(
        _ request: HTTPRequest, stored: Located, cachePolicy: RequestCachePolicy
    ) -> CacheDecision.Measure? {
        let context = self.context
        let measure = CacheDecision.Measure(stored, context)
        let decision = CacheDecision.decide(
            request: request, requestDirectives: requestDirectives(of: request), located: stored, policy: cachePolicy,
            context: context, measure: measure)
        guard case .useStored(let stale) = decision else { return nil }
        counters.recordHits(stale: stale)
        return measure
    }

    /// A client's conditional GET or HEAD (RFC 9111 §4.3.2): answered as the plain request
    /// would be, with the client's entity tags merged into whatever the cache sends the origin,
    /// then evaluated against the answer: 304 when the client's representation is current
    /// (whether the stored response, a revalidated one, or the origin's 304 says so), else the
    /// full response.
    /// `plain` is the request without the preconditions `client` holds.
    @concurrent
    private func respondToConditional(
        _ plain: HTTPRequest, client: ClientPreconditions, cachePolicy: RequestCachePolicy,
        transport: @escaping Transport, primaryKey: CacheKey
    ) async throws -> HTTPCacheResponse {
        let result = try await respond(
            to: plain, cachePolicy: cachePolicy, transport: transport, primaryKey: primaryKey, found: nil,
            searchedTiers: 0, client: client)
        guard client.notModified(result.response, isStored: result.source.isFromCache) else { return result }
        var answer = result
        answer.response = ClientPreconditions.notModifiedResponse(for: result.response)
        answer.body = Data()
        return answer
    }

    /// The rest of ``response(for:body:cachePolicy:transport:)``, off the caller's executor:
    /// `found` is what the memory tiers held (if anything), and `searchedTiers` how many tiers at
    /// the top were read already and had nothing. `client` holds the preconditions taken out of
    /// a client's conditional request, merged into what is sent to the origin.
    @concurrent
    private func respond(
        to request: HTTPRequest, cachePolicy: RequestCachePolicy, transport: @escaping Transport, primaryKey: CacheKey,
        found: Located?, searchedTiers: Int, client: ClientPreconditions? = nil
    ) async throws -> HTTPCacheResponse {
        let requestDirectives = requestDirectives(of: request)
        let stored: Located?
        if let found {
            stored = found
        } else {
            stored = await lookup(primaryKey: primaryKey, request: request, from: searchedTiers)
        }
        let context = self.context
        let measure = stored.map { CacheDecision.Measure($0, context) }
        let decision = CacheDecision.decide(
            request: request, requestDirectives: requestDirectives, located: stored, policy: cachePolicy,
            context: context,
            measure: measure)

        switch decision {
        case .useStored(let stale):
            guard let stored else { break }
            counters.recordHits(stale: stale)
            return served(stored, source: .cache, request: request, now: context.now, measure: measure)
        case .useStoredAndRevalidate:
            guard let stored else { break }
            counters.recordHits(stale: true)
            guard Self.revalidatesInBackground else {
                return served(stored, source: .staleWhileRevalidate, request: request, now: context.now)
            }
            background.start(key: stored.key.rawValue) { [self] in
                do {
                    _ = try await revalidate(request, stored: stored, primaryKey: primaryKey, transport: transport)
                } catch {
                    logger?.debug(
                        "background revalidation failed", metadata: ["key": "\(stored.key)", "error": "\(error)"])
                }
            }
            return served(stored, source: .staleWhileRevalidate, request: request, now: context.now)
        case .unsatisfiable:
            if cachePolicy == .returnCacheDataDontLoad {
                throw HTTPCacheError(
                    .notCached, "no stored response for \(primaryKey), and the cache policy forbids loading")
            }
            return unsatisfiable()
        case .revalidate:
            if let stored {
                return try await revalidate(
                    request, stored: stored, primaryKey: primaryKey, transport: transport, client: client)
            }
        case .fetch:
            // Stored partial content lacking bytes at one end only: those bytes alone (§3.4).
            if stored == nil, client == nil, request.method == .get, cachePolicy == .useProtocolCachePolicy,
                !requestDirectives.noStore,
                let completed = try await completeStoredPart(request, primaryKey: primaryKey, transport: transport)
            {
                return completed
            }
        }
        counters.recordMiss()
        var outgoing = request
        if cachePolicy == .reloadIgnoringLocalAndRemoteCacheData {
            // Added to the request's own directives: replaced, a client's `no-store` no longer
            // reached the caches upstream (§5.2.1.5).
            let directives = outgoing.headerFields[values: .cacheControl]
            if !CacheControl(fieldValues: directives).noCache {
                outgoing.headerFields[.cacheControl] = (directives + ["no-cache"]).joined(separator: ", ")
            }
            if let pragma = HTTPField.Name("Pragma") { outgoing.headerFields[pragma] = "no-cache" }
        }
        return try await fetchAndStore(
            outgoing, original: request, primaryKey: primaryKey, fallback: stored, transport: transport, client: client)
    }

    /// The stored response for `request` when it may be used as it is, found without suspending:
    /// every tier is local, a response is stored, and RFC 9111 lets it answer without contacting
    /// the origin (fresh, or stale within the request's `max-stale`). `nil` in every other case,
    /// and then nothing was counted: call ``response(for:body:cachePolicy:transport:)``.
    ///
    /// For servers that answer hits on their event loop (the caching proxy does) rather than
    /// starting an async task per request.
    public func usableStoredResponse(for request: HTTPRequest) -> HTTPCacheResponse? {
        guard storage.isEntirelyLocal else { return nil }
        return usableStoredResponse(for: request, tiers: nil)
    }

    /// ``usableStoredResponse(for:)`` read from the storage's leading memory tiers alone, whatever
    /// tiers follow them: for an event loop, which must no more wait on a disk (a cold page, a
    /// large body decompressed) than on a network. A response stored only below them is `nil`
    /// here, and found by ``response(for:body:cachePolicy:transport:)``, which promotes it.
    package func usableStoredResponseInMemory(for request: HTTPRequest) -> HTTPCacheResponse? {
        guard storage.leadingMemoryTiers > 0 else { return nil }
        return usableStoredResponse(for: request, tiers: 0..<storage.leadingMemoryTiers)
    }

    /// The stored response for `request` read without suspending from the local tiers in `tiers`
    /// (all when nil), when it may be used as it is.
    private func usableStoredResponse(for request: HTTPRequest, tiers: Range<Int>?) -> HTTPCacheResponse? {
        if Self.carriesConnectionNamedFields(request) {
            return usableStoredResponse(for: Self.forwardable(request), tiers: tiers)
        }
        // A response whose tags' purge records only a suspending tier holds is undecided here.
        var undecided = false
        guard request.method == .get || request.method == .head, let primaryKey = primaryKey(for: request),
            let stored = lookupLocally(primaryKey: primaryKey, request: request, tiers: tiers, undecided: &undecided),
            !undecided
        else { return nil }
        guard let usable = usableWithoutNetwork(request, stored: stored, cachePolicy: .useProtocolCachePolicy) else {
            return nil
        }
        return served(stored, source: .cache, request: request, now: usable.now, measure: usable)
    }

    /// Like ``response(for:body:cachePolicy:transport:)``, as a value for app code that shows
    /// "may be out of date" when the network failed.
    nonisolated(nonsending) public func cachedValue<Value>(
        for request: HTTPRequest, cachePolicy: RequestCachePolicy = .useProtocolCachePolicy,
        transport: @escaping Transport, decode: (HTTPCacheResponse) throws -> Value
    ) async throws -> CachedValue<Value> {
        let result = try await response(for: request, cachePolicy: cachePolicy, transport: transport)
        let value = try decode(result)
        if result.source == .staleFallback {
            return .cached(value, storedAt: result.storedAt ?? configuration.clock.now())
        }
        return .fresh(value)
    }

    /// The cache-then-network pattern: the stored response first, whatever its age (if there is
    /// one), then the response from the network (or a revalidation). A network failure after a
    /// stored response ends the sequence without an error; with nothing stored, it throws.
    public func responses(
        for request: HTTPRequest, transport: @escaping Transport
    ) -> AsyncThrowingStream<HTTPCacheResponse, any Error> {
        let request = Self.carriesConnectionNamedFields(request) ? Self.forwardable(request) : request
        return AsyncThrowingStream { continuation in
            let task = Task {
                var yieldedStored = false
                if let primaryKey = primaryKey(for: request),
                    let stored = await lookup(primaryKey: primaryKey, request: request)
                {
                    continuation.yield(served(stored, source: .cache, request: request, now: configuration.clock.now()))
                    yieldedStored = true
                }
                do {
                    let fresh = try await response(
                        for: request, cachePolicy: .reloadRevalidatingCacheData, transport: transport)
                    if !(yieldedStored && fresh.source == .staleFallback) { continuation.yield(fresh) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: yieldedStored ? nil : error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    // MARK: Exchanges

    /// Sends a conditional request for `stored` (or a full one without validators) and handles
    /// 304, a new response, and failures.
    private func revalidate(
        _ request: HTTPRequest, stored: Located, primaryKey: CacheKey, transport: @escaping Transport,
        client: ClientPreconditions? = nil
    ) async throws -> HTTPCacheResponse {
        guard let conditional = Validation.conditionalRequest(for: request, revalidating: stored.response) else {
            counters.recordMiss()
            return try await fetchAndStore(
                request, original: request, primaryKey: primaryKey, fallback: stored, transport: transport,
                client: client)
        }
        // Judged before the round trip, over which a fresh response can turn stale.
        let passedOver = whyPassedOver(stored)
        let exchange: Exchange
        let sent = client?.merged(into: conditional) ?? conditional
        do {
            exchange = try await fetch(sent, body: nil, confirming: stored.response, transport: transport)
        } catch {
            if let fallback = staleFallback(stored, for: request, error: error) { return fallback }
            throw error
        }
        if exchange.response.status.code == 304 {
            // §4.3.4: the 304 updates the stored responses its validators select, among all of
            // the resource's (its variants included), the request's own or not. A response
            // stored under the resource's own key is its only one: nothing more to read.
            let resourceKey =
                Self.isHEADResponse(stored, primaryKey: primaryKey) ? Self.headKey(primaryKey) : primaryKey
            var candidates = stored.key == resourceKey ? [stored] : await storedResponses(of: resourceKey)
            if !candidates.contains(where: { $0.key == stored.key }) { candidates.append(stored) }
            var freshenedOwn: Located?
            // The cache's own request carried `stored`'s validators alone; a client's own
            // preconditions passed through leave the strict selection of §4.3.4.
            let storedResponses = candidates.map(\.response)
            let updated =
                client == nil
                ? Validation.storedResponsesUpdated(
                    byAnswerTo: exchange.response,
                    askingFor: candidates.firstIndex { $0.key == stored.key } ?? -1, among: storedResponses)
                : Validation.storedResponsesUpdated(by: exchange.response, among: storedResponses)
            let writes = exchange.claimsStore()
            for index in updated {
                let freshened = Validation.freshen(
                    candidates[index].response, with: exchange.response, requestTime: exchange.requestTime,
                    responseTime: exchange.responseTime)
                if writes, await isStillStored(candidates[index]) {
                    await writeFreshened(freshened, under: candidates[index].key, request: request)
                }
                if candidates[index].key == stored.key { freshenedOwn = Located(response: freshened, key: stored.key) }
            }
            guard let freshenedOwn else {
                // The client's representation, not the stored one, is current: its 304 passes.
                if let client, client.isConfirmed(by: exchange.response, answering: sent) {
                    return HTTPCacheResponse(response: exchange.response, body: Data(), source: .network)
                }
                // The 304 is for another representation: ask again without preconditions.
                return try await fetchAndStore(
                    request, original: request, primaryKey: primaryKey, fallback: stored, transport: transport)
            }
            counters.recordRevalidation(modified: false)
            var revalidated = served(
                freshenedOwn, source: .revalidated, request: request, now: configuration.clock.now())
            revalidated.replacedStoredResponse = passedOver
            return revalidated
        }
        if CacheDecision.staleIfErrorStatuses.contains(exchange.response.status.code),
            CacheDecision.staleIfErrorAllows(
                stored, requestDirectives: requestDirectives(of: request), context: context)
        {
            counters.recordStaleServe()
            return served(stored, source: .staleFallback, request: request, now: configuration.clock.now())
        }
        counters.recordRevalidation(modified: true)
        return await handle(exchange, for: request, primaryKey: primaryKey, stored: stored, passedOver: passedOver)
    }

    private func fetchAndStore(
        _ outgoing: HTTPRequest, original: HTTPRequest, primaryKey: CacheKey, fallback: Located?,
        transport: @escaping Transport,
        client: ClientPreconditions? = nil
    ) async throws -> HTTPCacheResponse {
        // Judged before the round trip, as a revalidation's is.
        let passedOver = fallback.map(whyPassedOver)
        let exchange: Exchange
        do {
            exchange = try await fetch(client?.merged(into: outgoing) ?? outgoing, body: nil, transport: transport)
        } catch {
            if let fallback, let response = staleFallback(fallback, for: original, error: error) { return response }
            throw error
        }
        if let fallback, CacheDecision.staleIfErrorStatuses.contains(exchange.response.status.code),
            CacheDecision.staleIfErrorAllows(
                fallback, requestDirectives: requestDirectives(of: original), context: context)
        {
            counters.recordStaleServe()
            return served(fallback, source: .staleFallback, request: original, now: configuration.clock.now())
        }
        if exchange.response.status.code == 304, client != nil {
            // An answer to the client's own preconditions: nothing to store.
            return HTTPCacheResponse(response: exchange.response, body: Data(), source: .network)
        }
        return await handle(
            exchange, for: original, primaryKey: primaryKey, stored: fallback, passedOver: passedOver)
    }

    /// Whether `request` carries a field its `Connection` names (RFC 9110 §7.6.1). Such fields
    /// belong to the caller's hop: the origin never sees them (see ``forwardable(_:)``), so
    /// neither may the key, `Vary` or the coalescing, and every entry point takes them out
    /// first (a request naming `Accept-Language` there had the origin's default page stored as
    /// the variant for its language, for every reader of it). The usual `Connection: keep-alive`
    /// names none: the request goes on as it is, its fields not copied.
    static func carriesConnectionNamedFields(_ request: HTTPRequest) -> Bool {
        guard let connection = request.headerFields[.connection],
            !ASCIICase.equals(connection.utf8, ignoringCaseTo: "keep-alive"),
            !ASCIICase.equals(connection.utf8, ignoringCaseTo: "close")
        else { return false }
        return DirectiveParser.fieldNames(connection).contains { name in
            HTTPField.Name(name).map { $0 != .connection && request.headerFields[$0] != nil } ?? false
        }
    }

    /// `request` without its hop-by-hop fields (RFC 9110 §7.6.1): they describe the caller's
    /// connection, not the transport's, whatever the transport (URLSession, AsyncHTTPClient, the
    /// proxy's, a user's own).
    static func forwardable(_ request: HTTPRequest) -> HTTPRequest {
        var request = request
        request.headerFields = HopByHop.removing(from: request.headerFields)
        return request
    }

    /// Performs the exchange, joining an identical one in flight. `confirming` is the stored
    /// response a conditional request revalidates: what a 304 would confirm.
    func fetch(
        _ request: HTTPRequest, body: Data?, confirming stored: StoredResponse? = nil, transport: @escaping Transport
    ) async throws -> Exchange {
        let request = Self.forwardable(request)
        let clock = configuration.clock
        // Requests that differ only in the client's hop join one fetch (a proxy adds each
        // client's address: keyed with it, a burst of misses from N clients made N fetches).
        var key = "\(request.method) \(HTTPCacheKey.normalizedURI(of: request) ?? "")"
        for field in request.headerFields where !Self.clientHopFields.contains(field.name) {
            key += "\n\(field.name.canonicalName): \(field.value)"
        }
        let tagging = configuration.tagging
        let perform: @Sendable () async throws -> Exchange = {
            let requestTime = clock.now()
            var (response, responseBody) = try await transport(request, body)
            try Self.checkFieldCount(response.headerFields.count)
            let tags = tagging.take(from: &response)
            return Exchange(
                response: response, body: responseBody, requestTime: requestTime, responseTime: clock.now(), tags: tags,
                sent: request)
        }
        let (exchange, joined) = try await inFlight.run(key: key, perform)
        guard joined else { return exchange }
        // A response that varies on a client's hop field answers only requests that match it.
        if !Self.sameVariant(exchange, for: request) { return try await perform() }
        // A joined request gets the exchange only where this cache could have answered it with
        // the response, without asking the origin; otherwise it fetches again (see
        // `answersJoinedRequests`), and is not counted as coalesced.
        if configuration.mode == .shared, !answersJoinedRequests(exchange, to: request, confirming: stored) {
            return try await perform()
        }
        counters.recordCoalesced()
        return exchange
    }

    /// The request fields that describe a client's hop rather than what it asks for, which a
    /// proxy adds per client: requests that differ only in them join one fetch
    /// (``fetch(_:body:confirming:transport:)``), unless the response varies on one of them.
    static let clientHopFields = Set(["X-Forwarded-For", "Forwarded", "Via"].compactMap { HTTPField.Name($0) })

    /// Whether `a` and `b` carry the same client's hop fields (``clientHopFields``).
    private static func sameClientHop(_ a: HTTPRequest, _ b: HTTPRequest) -> Bool {
        clientHopFields.allSatisfy { a.headerFields[values: $0] == b.headerFields[values: $0] }
    }

    /// Whether `request`, which joined `exchange` and may differ from the request sent in the
    /// client's hop fields, selects the same variant of the response (RFC 9111 §4.1).
    private static func sameVariant(_ exchange: Exchange, for request: HTTPRequest) -> Bool {
        let names = Vary.fieldNames(of: exchange.response)
        guard !names.isEmpty else { return true }
        guard !names.contains("*") else { return false }
        return Vary.matches(request, Vary.varyingFields(names, of: exchange.sent))
    }

    /// Whether a shared cache hands `exchange` to the requests that joined it, identical to
    /// `request` but for the client's hop fields (``clientHopFields``), perhaps not from the same
    /// visitor: only when it could serve the response to
    /// them from storage, fresh, with no validation (as nginx's cache lock and Varnish's waiting
    /// list do). A response the origin built from what the identical requests do not show (the
    /// client's address, its TLS certificate) answers only the request that fetched it: one
    /// marked `private` or `no-store`, or setting a cookie (RFC 9111 §5.2.2.7: "intended for a
    /// single user"), but also one the cache may not reuse without asking (`no-cache`, no
    /// lifetime, stale on arrival), whose origin wants to judge every request. A 304 is judged
    /// as the stored response it freshens (`stored`), a 206 as the response it is part of.
    /// `Authorization` does not keep the response from them: they sent the same credentials.
    /// A server error answers them unless it sets a cookie or is `private`: an error page is
    /// otherwise nobody's own, and each joined request asking a failing origin again (then
    /// serving stale-if-error anyway) multiplied its load; but a 503 setting a session cookie
    /// gave every visitor of the burst one session. That holds for requests from the same client
    /// hop only: another client's is judged as any response, since an origin's error may be the
    /// client's own (a rate limit keyed on its address).
    ///
    /// A joined request that fetches again has waited for the first exchange: a burst of
    /// requests for a response nobody may share takes two round trips for all but the first.
    private func answersJoinedRequests(
        _ exchange: Exchange, to request: HTTPRequest, confirming stored: StoredResponse?
    ) -> Bool {
        var response = exchange.response
        if response.status.code == 304, let stored {
            response =
                Validation.freshen(
                    stored, with: response, requestTime: exchange.requestTime, responseTime: exchange.responseTime
                ).response
        } else if response.status.code == 206 || response.status.code == 304 {
            response.status = .ok
        }
        if configuration.setCookieInSharedCache != .stored, response.headerFields[.setCookie] != nil { return false }
        let directives = CacheControl(fieldValues: response.headerFields[values: .cacheControl])
        // An error page answers another client's requests only as a stored response would: one
        // client's (a 503 of a rate limit keyed on its address) is not the others'.
        if response.status.code >= 500, Self.sameClientHop(request, exchange.sent) {
            return !directives.isPrivate && directives.privateFieldNames.isEmpty
        }
        if directives.noCache || !directives.noCacheFieldNames.isEmpty || !directives.privateFieldNames.isEmpty {
            return false
        }
        var asStored = request
        asStored.method = .get
        asStored.headerFields[.authorization] = nil
        guard
            Storability.reasonNotToStore(
                request: asStored, requestDirectives: CacheControl(), response: response, directives: directives,
                shared: true) == nil
        else { return false }
        let facts = ResponseFacts(response, directives: directives)
        let lifetime = Freshness.lifetime(
            facts, responseTime: exchange.responseTime, shared: true, heuristics: configuration.heuristics)
        let age = Freshness.currentAge(
            facts, requestTime: exchange.requestTime, responseTime: exchange.responseTime, now: exchange.responseTime)
        return lifetime > age
    }

    /// Why `stored` was not served without asking the origin: stale, or its own directives asked
    /// for validation (`no-cache`, a hook's revalidation), or else the request would not take it
    /// fresh (RFC 9211 §2.2's `fwd=stale` and `fwd=request`).
    private func whyPassedOver(_ stored: Located) -> HTTPCacheResponse.ReplacedStoredResponse {
        let measure = CacheDecision.Measure(stored, context)
        return measure.isStale || measure.facts.directives.noCache || stored.revalidatesFirst
            ? .stale : .passedOverByRequest
    }

    /// Stores a response from the network if it may be stored, and returns it. `stored` is what
    /// the cache held for the request, if anything (a HEAD response updates it or marks it stale),
    /// and `passedOver` why it was not served, judged before the exchange.
    private func handle(
        _ exchange: Exchange, for request: HTTPRequest, primaryKey: CacheKey, stored: Located?,
        passedOver: HTTPCacheResponse.ReplacedStoredResponse?
    ) async -> HTTPCacheResponse {
        var result = HTTPCacheResponse(response: exchange.response, body: exchange.body, source: .network)
        result.replacedStoredResponse = passedOver
        guard exchange.claimsStore() else { return result }
        switch request.method {
        case .get: result.wasStored = await storeIfAllowed(exchange, for: request, primaryKey: primaryKey)
        case .head:
            result.wasStored = await storeHEADResponse(exchange, for: request, primaryKey: primaryKey, stored: stored)
        default: break
        }
        return result
    }

    /// Forwards a request the cache does not answer (unsafe methods, uncacheable keys), and
    /// invalidates what an unsafe method's success changes (RFC 9111 §4.4). A response to POST
    /// that says it is the target's current representation (RFC 9110 §9.3.3) is then stored for
    /// a later GET or HEAD of the target.
    @concurrent
    private func forwardUncached(
        _ request: HTTPRequest, body: Data?, transport: @escaping Transport
    ) async throws -> HTTPCacheResponse {
        let requestTime = configuration.clock.now()
        let exchanged: (HTTPResponse, Data)
        do {
            exchanged = try await transport(Self.forwardable(request), body)
        } catch {
            // The origin may have made the change and answered 2xx before the exchange failed
            // (a body too large for the transport to hold, one cut off or timed out): the target
            // is invalidated as if it had succeeded, since a removal is always safe.
            await invalidateTarget(of: request)
            throw error
        }
        var (response, responseBody) = exchanged
        let responseTime = configuration.clock.now()
        let tags = configuration.tagging.take(from: &response)
        await invalidate(after: request, response: response)
        var result = HTTPCacheResponse(response: response, body: responseBody, source: .network)
        if Storability.isReusablePOSTResponse(response, to: request, shared: configuration.mode == .shared) {
            var get = request
            get.method = .get
            if let primaryKey = primaryKey(for: get) {
                let exchange = Exchange(
                    response: response, body: responseBody, requestTime: requestTime, responseTime: responseTime,
                    tags: tags, sent: request)
                result.wasStored = await storeIfAllowed(exchange, for: get, primaryKey: primaryKey)
            }
        }
        return result
    }

    /// Removes what `request` changed, given the `response` it got, when it is an unsafe method
    /// with a non-error response: the target URI and same-origin `Location` / `Content-Location`
    /// (RFC 9111 §4.4). For front ends that forward such requests themselves (the Hummingbird
    /// middleware runs the route); ``response(for:body:cachePolicy:transport:)`` does it already.
    public func invalidate(after request: HTTPRequest, response: HTTPResponse) async {
        // The first is the target, keyed from the request; the locations come from URLs.
        for (index, uri) in Invalidation.invalidatedURIs(request: request, response: response).enumerated() {
            let key =
                index == 0
                ? targetKey(of: request)
                : URL(string: uri).flatMap { primaryKey(for: HTTPRequest(method: .get, url: $0)) }
            guard let key else { continue }
            logIfIncomplete(await remove(primaryKey: key), invalidating: key)
            counters.recordInvalidation()
        }
    }

    /// Logs an invalidation a tier failed (it may still serve the old response; the tiered
    /// cache has counted the error).
    private func logIfIncomplete(_ failure: TierCacheError?, invalidating key: CacheKey) {
        guard let failure else { return }
        logger?.warning(
            "an invalidated response may still be stored", metadata: ["key": "\(key)", "error": "\(failure)"])
    }

    /// Removes the target of `request`, an unsafe method whose response never arrived whole.
    private func invalidateTarget(of request: HTTPRequest) async {
        guard !Invalidation.safeMethods.contains(request.method), let key = targetKey(of: request) else { return }
        logIfIncomplete(await remove(primaryKey: key), invalidating: key)
        counters.recordInvalidation()
    }

    /// The primary key of a GET of `request`'s target, made from the request's own parts: through
    /// `URL`, a target holding bytes a URI may not (`?tag[]=new`) was encoded a second time, and
    /// named another key than the one its responses are stored under.
    private func targetKey(of request: HTTPRequest) -> CacheKey? {
        var get = request
        get.method = .get
        return primaryKey(for: get)
    }

    /// The longest primary key the engine uses, in UTF-8 bytes: a tier key's limit less 1 KiB,
    /// room for the suffixes of the entries kept beside a resource's (its HEAD response, partial
    /// content and variants), so that their keys never need shortening.
    public static let maximumPrimaryKeyLength = CacheKey.maximumUTF8Length - 1024

    /// The request's primary key, built and checked once per request: ``Configuration/key``,
    /// with the default key's results reused for equal request targets. `nil` keeps the request
    /// out of the cache: the key function said so, or its key is invalid (counted in
    /// ``HTTPCacheStatistics/invalidKeys`` and logged at `debug`).
    func primaryKey(for request: HTTPRequest) -> CacheKey? {
        configuration.usesDefaultKey
            ? normalizedKeys.key(for: request, validating: validatedPrimaryKey)
            : configuration.key(request).flatMap(validatedPrimaryKey)
    }

    /// `text` as a primary key, or `nil`, counted and logged, when it cannot be one.
    private func validatedPrimaryKey(_ text: String) -> CacheKey? {
        do throws(TierCacheError) {
            // Keys starting with a unit separator are the engine's own (tags' purge records).
            guard text.utf8.first != 0x1F else {
                throw TierCacheError(.invalidKey, "the key starts with U+001F, which the engine keeps for its records")
            }
            guard text.utf8.count <= Self.maximumPrimaryKeyLength else {
                throw TierCacheError(
                    .invalidKey,
                    "the key is \(text.utf8.count) UTF-8 bytes long; the limit is \(Self.maximumPrimaryKeyLength)")
            }
            return try CacheKey(text)
        } catch {
            counters.recordInvalidKey()
            logger?.debug(
                "request passes through uncached: its cache key is invalid",
                metadata: ["error": "\(error)", "key-prefix": "\(text.prefix(80))"])
            return nil
        }
    }

    func requestDirectives(of request: HTTPRequest) -> CacheControl {
        request.headerFields[.cacheControl] == nil
            ? CacheControl() : CacheControl(fieldValues: request.headerFields[values: .cacheControl])
    }

    /// The stored response as the answer to `request`, if the offline policy allows it after `error`.
    private func staleFallback(_ stored: Located, for request: HTTPRequest, error: any Error) -> HTTPCacheResponse? {
        guard !(error is any ResponseSentPastCache), configuration.isConnectivityError(error) else { return nil }
        let context = self.context
        let measure = CacheDecision.Measure(stored, context)
        let directives = measure.facts.directives
        let allowed: Bool
        if CacheDecision.staleIfErrorAllows(stored, requestDirectives: requestDirectives(of: request), context: context)
        {
            allowed = true
        } else {
            let forbidden =
                directives.noCache || CacheDecision.forbidsStale(directives, shared: context.shared)
                || !CacheDecision.mayServeStaleUnbidden(measure.facts, context)
            switch configuration.offlineFallback {
            case .never, .whereStaleIfErrorAllows:
                allowed = false
            case .withinMaxStale(let bound):
                allowed = !forbidden && measure.age - measure.lifetime <= bound
            case .always:
                allowed = !forbidden
            case .evenWhenRevalidationRequired:
                allowed = true
            }
        }
        guard allowed else { return nil }
        counters.recordStaleServe()
        logger?.notice(
            "origin unreachable; served the stored response",
            metadata: [
                "url": "\(request.url?.absoluteString ?? "")", "age": "\(measure.ageSeconds)", "error": "\(error)",
            ])
        var result = served(stored, source: .staleFallback, request: request, now: context.now)
        result.networkError = error
        return result
    }

    /// The answer when nothing stored answers the request and `only-if-cached` forbids the network:
    /// 504 Gateway Timeout (RFC 9111 §5.2.1.7), counted as a miss.
    func unsatisfiable() -> HTTPCacheResponse {
        counters.recordMiss()
        return HTTPCacheResponse(response: HTTPResponse(status: .gatewayTimeout), body: Data(), source: .unsatisfiable)
    }

    /// A stored response as sent to the caller: with `Age` (RFC 9111 §5.1), without a body for HEAD.
    /// `measure`, when the caller has it, is the stored response's age and lifetime at `now`.
    func served(
        _ located: Located, source: HTTPCacheResponse.Source, request: HTTPRequest, now: Date,
        measure: CacheDecision.Measure? = nil
    ) -> HTTPCacheResponse {
        // Read through `located` field by field: copying the whole stored response would cost a
        // retain and release per field on every hit.
        let measure =
            measure
            ?? CacheDecision.Measure(
                located,
                CacheDecision.Context(
                    shared: configuration.mode == .shared, heuristics: configuration.heuristics, now: now))
        return HTTPCacheResponse(
            response: measure.facts.response(located.response.response, servedAtAge: measure.ageSeconds),
            body: request.method == .head ? Data() : located.response.body, source: source,
            storedAt: located.response.storedAt, age: measure.age, userInfo: located.response.userInfo,
            freshnessLifetime: measure.lifetime)
    }
}
