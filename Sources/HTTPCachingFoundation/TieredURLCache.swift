import Foundation
import HTTPCaching
import HTTPTypes
import HTTPTypesFoundation
@_spi(TierCacheInternals) import TierCache

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `URLCache` whose storage is a `TieredCache`: `URLSession`'s own caching (its freshness
/// rules, `cachePolicy`, `willCacheResponse` delegates) keeps working unchanged and reads and
/// stores through TierCache's tiers. That is Apple's Foundation; FoundationNetworking on Linux
/// reads but never stores (see "Linux" below).
///
/// Adoption is one line: `URLCache.shared = TieredURLCache(storage: cache)` or
/// `configuration.urlCache = TieredURLCache(storage: cache)`.
///
/// One response is kept per URL (per key). A response with `Vary` answers only requests that
/// send what the storing request sent in the fields it names (RFC 9111 §4.1, compared as the HTTP
/// engine compares them), except `Accept-Encoding`, which URLSession negotiates and decodes
/// itself; another variant is a miss, and the next stored response replaces it. `Vary: *` is not
/// stored.
///
/// What it applies on every store, in this order:
/// 0. hop-by-hop fields (`Connection`, `Keep-Alive`, `Transfer-Encoding` and the like) are
///    removed from what is stored;
/// 1. the storage policy: the narrower of the `CachedURLResponse`'s `storagePolicy` and the one
///    `TieredCache.policyTable` gives the URL's scheme (`.allowedInMemoryOnly` keeps the
///    response out of disk and network tiers, `.notAllowed` out of all);
/// 2. the `StoreHook`s, in order (they may rewrite the stored response, stamp `userInfo`, or
///    override the policy; what the caller already received is unchanged);
/// 3. RFC 9111's rules for what a private cache may store (§3), on the response the hooks
///    leave: no `no-store` in the request or the response, not a partial (206) or 304, 412 or
///    416 response, and a response with freshness information or a status that may be cached
///    heuristically (a hook can give one its freshness with
///    `StoreHook.overrideCacheControl(_:where:)`). The method is the key function's business: a
///    request it gives a key is judged as a GET would be. A response refused here is not stored
///    and leaves a stored one in place;
/// 4. each tier's own capacity and per-entry size rule (`EntrySizeLimit`, by default 5% of the
///    tier's capacity, as Apple's `URLCache` documents for its disk cache): a tier that refuses
///    an entry simply does not keep it.
///
/// `URLCache`'s API is synchronous, so this class never suspends and never blocks a thread on
/// async work: reads go through the *local* tiers only (`LocalCacheTier`: memory, LMDB), with
/// the same promotion as `TieredCache.localEntry(forKey:tiers:)`; stores and removals reach
/// local tiers synchronously and a network tier (Redis) in the background, each key's in the order
/// they were made (``waitForNetworkWrites()`` waits for them; a store that would take the bytes
/// waiting for network tiers past `networkWriteBudget` removes the key there instead, so that an
/// unreachable server holds at most that many bytes of entries in the queue, beside its
/// removals, which hold a key each), so a response
/// stored to Redis is visible to *other* processes, while this process reads it back from its
/// local tiers. A cache whose tiers are all network tiers therefore never answers a read.
///
/// A network tier is taken to be shared (other processes, other hosts, other users), so it is
/// given only what RFC 9111 lets a shared cache store, and not a response that sets a cookie (as
/// `HTTPCache` in its shared mode by default): a response to a request with `Authorization`
/// (without `public`, `s-maxage` or `must-revalidate`), a `private` one, or one with
/// `Set-Cookie` stays in the local tiers, and the network tiers lose the key's older entry.
/// Credentials URLSession adds on its own (a challenge's, cookies from its cookie storage) are
/// not in the request a `URLCache` is given: an origin that personalises responses by them must
/// mark them `private` (or `Vary` on the field) for them to stay out of a shared tier.
///
/// `userInfo` is kept for its `String` keys with `String` values (other entries are dropped:
/// they cannot be stored on disk portably); the stored date is returned as
/// ``storedAtUserInfoKey``.
///
/// ## Linux (swift-corelibs-foundation)
/// FoundationNetworking's `URLSession` differs from Apple's in what it asks of a `URLCache`:
/// - It reads through `getCachedResponse(for:completionHandler:)` (the data-task variant,
///   which this class routes to ``cachedResponse(for:)``) and serves what that returns without
///   checking the request's `cachePolicy` or the response's freshness; so on Linux this class
///   applies both itself (see ``getCachedResponse(for:completionHandler:)``). It never
///   revalidates a stale response: that goes to the origin unconditionally.
/// - It checks the response once more with rules of its own, and *deletes* one they refuse
///   (through `removeCachedResponse(for:)`). Its rules refuse every response with `Vary`, and
///   every one with `Expires` but no `max-age` (its formatter reads no HTTP date on Linux), so
///   this class hands the session those responses without the two fields, having applied both
///   itself; and it hands over nothing (the request goes to the origin, the stored response
///   stays) where the rules would refuse it for another reason: a request with
///   `Authorization`, a response with `WWW-Authenticate`, `no-cache` or `no-store`, a status
///   FoundationNetworking does not serve from a cache (such as 302, 307, 308), or a `max-age`
///   that has run out. So on Linux a response past its `max-age` is not served even under
///   `.returnCacheDataElseLoad`: for an offline fallback there, use `HTTPCache` or
///   ``HTTPCacheURLProtocol``.
/// - It never *stores*: its HTTP protocol reports every response with
///   `cacheStoragePolicy: .notAllowed`, so `storeCachedResponse(_:for:)` (either variant) is not
///   called and `willCacheResponse` delegates are not asked. An app on Linux stores responses
///   itself (`urlCache.storeCachedResponse(CachedURLResponse(response:data:), for: request)`,
///   as an Alamofire-style `willCacheResponse` hook would), or uses ``HTTPCacheURLProtocol``,
///   which stores through `HTTPCache` on every platform.
///
/// Cost: a read decodes the stored entry (a header of a few hundred bytes of JSON and the
/// body); a store encodes it once and writes it to each permitted tier.
public final class TieredURLCache: URLCache, @unchecked Sendable {
    // @unchecked Sendable: every stored property is a `let` of a Sendable type (TieredCache,
    // [StoreHook], a @Sendable closure, NetworkTierWrites, a Locked, a Bool); the superclass's own
    // storage is never used (it is created with zero capacities), so no mutable state is shared.

    /// The tiers behind this cache.
    public let storage: TieredCache
    /// The hooks run before each store.
    public let storeHooks: [StoreHook]
    private let key: @Sendable (URLRequest) -> String?
    /// The network tiers' writes and removals, in order.
    private let networkWrites: NetworkTierWrites
    /// Held across a change of the local tiers and the queueing of the same change for the
    /// network tiers, when there are any: a store and a removal racing each other are queued in
    /// the order they changed the local tiers (a store's local write, then a `removeAll`, then
    /// the store queued after the removal left the response in Redis after the logout that
    /// emptied the device).
    private let changeOrder = Locked(())
    private let hasNetworkTiers: Bool

    /// The `userInfo` key under which a cached response carries the `Date` it was stored.
    public static let storedAtUserInfoKey = "TierCache.storedAt"

    /// A cache over `storage`.
    ///
    /// - Parameters:
    ///   - storage: the tiers; its `TieredCache.policyTable` is the per-scheme storage policy.
    ///   - storeHooks: run before each store (see `StoreHook`).
    ///   - key: the storage key of a request, `nil` to keep it out of the cache; by default
    ///     ``defaultKey(for:)`` (method and URL without fragment). Use it to drop volatile query
    ///     items, as SDWebImage's `cacheKeyFilter` does.
    ///   - networkWriteBudget: the most bytes of entries waiting to be written to the network
    ///     tiers (in the background) at once; a store past it removes the key from the network
    ///     tiers instead of writing it (they then hold nothing older than this process stored).
    ///     64 MiB by default.
    public init(
        storage: TieredCache, storeHooks: [StoreHook] = [], key: (@Sendable (URLRequest) -> String?)? = nil,
        networkWriteBudget: Int = 64 << 20
    ) {
        self.storage = storage
        self.storeHooks = storeHooks
        self.key = key ?? Self.defaultKey(for:)
        self.networkWrites = NetworkTierWrites(budget: max(0, networkWriteBudget))
        self.hasNetworkTiers = storage.tiers.contains { !($0 is any LocalCacheTier) }
        // Zero capacities: the base class keeps nothing itself. (On Linux it still creates its
        // cache directory under the user's caches directory, as every URLCache does.)
        super.init(memoryCapacity: 0, diskCapacity: 0, diskPath: nil)
    }

    /// The default storage key: `"urlcache GET <url>"` for GET requests without a fragment;
    /// `nil` (not cached) for other methods, as `URLSession` caches only GET responses. A URL
    /// relative to a base is keyed by the absolute URL it names.
    public static func defaultKey(for request: URLRequest) -> String? {
        guard let url = request.url, (request.httpMethod ?? "GET") == "GET" else { return nil }
        // Resolved: the relative part alone (`users/me`) keyed every host's responses alike.
        var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        components?.fragment = nil
        guard let absolute = components?.url?.absoluteString else { return nil }
        return "urlcache GET \(absolute)"
    }

    private func cacheKey(for request: URLRequest) -> CacheKey? {
        guard let raw = key(request) else { return nil }
        return try? CacheKey(raw)
    }

    /// Waits until the network tiers have received every write and removal made so far (they
    /// are sent in the background, in order).
    public func waitForNetworkWrites() async {
        await networkWrites.waitForAll()
    }

    // MARK: Reading

    /// The response stored for `request` in the local tiers, or `nil`. An entry that does not
    /// decode is removed.
    public override func cachedResponse(for request: URLRequest) -> CachedURLResponse? {
        guard let key = cacheKey(for: request), let hit = storage.localEntry(forKey: key) else { return nil }
        guard let record = try? URLCacheRecord.decode(hit.entry.value), let url = request.url,
            let response = record.urlResponse(for: url)
        else {
            try? storage.removeLocalEntry(forKey: key)
            return nil
        }
        // Another variant of the resource (the key is the URL's): a miss, and the response the
        // origin sends next replaces it.
        guard record.matches(request) else { return nil }
        var userInfo: [AnyHashable: Any] = record.userInfo
        userInfo[Self.storedAtUserInfoKey] = record.storedAt
        return CachedURLResponse(
            response: response, data: record.body, userInfo: userInfo,
            storagePolicy: record.storagePolicy.urlCachePolicy)
    }

    /// The data-task variant: the one `URLSession` consults before loading.
    ///
    /// On Linux it also applies the request's `cachePolicy` and RFC 9111 freshness, because
    /// FoundationNetworking's `URLSession` serves whatever this returns without checking either:
    /// `.reloadIgnoringLocalCacheData`, `.reloadIgnoringLocalAndRemoteCacheData` and
    /// `.reloadRevalidatingCacheData` get `nil`; `.useProtocolCachePolicy` gets the response
    /// only while it is fresh and within the request's own `Cache-Control` (see
    /// `isFresh(_:for:now:)`; stale ones go to the origin unconditionally: FoundationNetworking
    /// does not revalidate); `.returnCacheDataElseLoad` and `.returnCacheDataDontLoad` get any
    /// stored response. Then, since FoundationNetworking deletes a response its own check
    /// refuses, the response is handed over only as that check accepts it: without `Vary` (this
    /// class matched it) and, without `max-age`, without `Expires` (this class judged it), and
    /// not at all (the stored response kept) where the check would refuse it otherwise, as for
    /// a `max-age` that has run out: see "Linux" above. On Apple platforms the response is
    /// handed over as is and URLSession applies its own rules.
    public override func getCachedResponse(
        for dataTask: URLSessionDataTask, completionHandler: @escaping (CachedURLResponse?) -> Void
    ) {
        guard let request = dataTask.currentRequest ?? dataTask.originalRequest else { return completionHandler(nil) }
        #if canImport(FoundationNetworking)
        let now = Date()
        let served: CachedURLResponse?
        switch request.cachePolicy {
        case .returnCacheDataElseLoad, .returnCacheDataDontLoad:
            served = cachedResponse(for: request)
        case .useProtocolCachePolicy:
            served = cachedResponse(for: request).flatMap { Self.isFresh($0, for: request, now: now) ? $0 : nil }
        default:
            served = nil
        }
        completionHandler(served.flatMap { FoundationNetworkingHandover.handover($0, for: request, now: now) })
        #else
        completionHandler(cachedResponse(for: request))
        #endif
    }

    /// Whether `cached` may answer `request` at `now`: fresh by RFC 9111 §4.2 (as a private
    /// cache, with the engine's default heuristics), not marked `no-cache`, and within what the
    /// request's own `Cache-Control` asks (§5.2.1): not `no-cache` or `no-store` (nor `Pragma:
    /// no-cache` without `Cache-Control`), no older than its `max-age`, fresh for its `min-fresh`
    /// more. (`max-stale` is not honoured: stale responses go to the origin.)
    static func isFresh(_ cached: CachedURLResponse, for request: URLRequest, now: Date) -> Bool {
        guard let httpURLResponse = cached.response as? HTTPURLResponse, let response = httpURLResponse.httpResponse,
            let storedAt = cached.userInfo?[storedAtUserInfoKey] as? Date
        else { return false }
        let stored = StoredResponse(
            response: response, body: cached.data, requestTime: storedAt, responseTime: storedAt, storedAt: storedAt)
        if stored.cacheControl.noCache { return false }
        let requestCacheControl = request.value(forHTTPHeaderField: "Cache-Control")
        let requested = CacheControl(fieldValues: requestCacheControl.map { [$0] } ?? [])
        if requested.noCache || requested.noStore { return false }
        if requestCacheControl == nil,
            request.value(forHTTPHeaderField: "Pragma")?.lowercased().contains("no-cache") == true
        {
            return false
        }
        let age = Freshness.currentAge(of: stored, now: now)
        let lifetime = Freshness.lifetime(of: stored, shared: false, heuristics: .init())
        if let maxAge = requested.maxAge, age > TimeInterval(maxAge) { return false }
        if let minFresh = requested.minFresh, lifetime - age < TimeInterval(minFresh) { return false }
        return age < lifetime
    }

    // MARK: Storing

    /// Stores `cachedResponse` for `request` under the narrower of its storage policy and the
    /// scheme's, after the store hooks; each tier applies its capacity and entry-size rule.
    public override func storeCachedResponse(_ cachedResponse: CachedURLResponse, for request: URLRequest) {
        _ = store(cachedResponse, for: request)
    }

    /// The data-task variant; FoundationNetworking's `URLSession` calls this one.
    public override func storeCachedResponse(_ cachedResponse: CachedURLResponse, for dataTask: URLSessionDataTask) {
        guard let request = dataTask.currentRequest ?? dataTask.originalRequest else { return }
        storeCachedResponse(cachedResponse, for: request)
    }

    /// `storeCachedResponse(_:for:)` with a request, saying what each local tier did (network
    /// tiers are written asynchronously and not reported). Empty when nothing was attempted:
    /// no key, not an HTTP response, a policy of `.notAllowed`, `Vary: *`, or a response RFC
    /// 9111 does not let a private cache store.
    @discardableResult
    public func store(
        _ cachedResponse: CachedURLResponse, for request: URLRequest
    ) -> [(tierName: String, outcome: StoreOutcome)] {
        guard let key = cacheKey(for: request), let url = request.url,
            let httpURLResponse = cachedResponse.response as? HTTPURLResponse,
            let response = httpURLResponse.httpResponse,
            let httpRequest = request.httpRequest
        else { return [] }
        var stored = response
        stored.headerFields = HopByHop.removing(from: response.headerFields)
        var candidate = StoreHook.Candidate(
            storing: stored, body: cachedResponse.data, for: httpRequest,
            storagePolicy: TierCache.StoragePolicy(cachedResponse.storagePolicy).narrower(
                than: storage.policyTable.policy(for: url)),
            userInfo: Self.stringUserInfo(cachedResponse.userInfo))
        storeHooks.run(on: &candidate)
        let policy = candidate.storagePolicy
        guard policy != .notAllowed else {
            removeEverywhere(key)
            return []
        }
        // `Vary: *`: no later request could be answered with it; the older response goes too.
        guard let varying = URLCacheRecord.varyingFields(of: candidate.response, for: httpRequest) else {
            removeEverywhere(key)
            return []
        }
        guard Self.mayStore(candidate.response, for: httpRequest, shared: false) else { return [] }
        let now = Date()
        // RFC 9110 §6.6.1: a cache storing a response without `Date` adds one (the engine does):
        // URLSession ages what this cache returns by its `Date`, and without one never did.
        var fields = candidate.response.headerFields
        if fields[.date] == nil { fields[.date] = HTTPDate.format(now) }
        let record = URLCacheRecord(
            status: candidate.response.status.code,
            fields: fields.map { [$0.name.rawName, $0.value] },
            userInfo: candidate.userInfo, storagePolicy: policy, storedAt: now, varying: varying, body: candidate.body)
        guard let encoded = try? record.encode() else { return [] }
        let entry = CacheEntry(value: encoded, storedAt: now)
        // The local tiers now, through the cache (so that a lookup racing this write, or a
        // suspension of the upper tiers, cannot leave an older value above), a network tier in
        // the background: it cannot be reached without suspending. Failures are counted by the
        // tier.
        // A network tier is shared (other processes, other hosts): it gets only what RFC 9111
        // lets a shared cache store, and loses the key's older entry otherwise.
        let sharable =
            hasNetworkTiers && Self.mayStore(candidate.response, for: httpRequest, shared: true)
            && candidate.response.headerFields[.setCookie] == nil
        return inChangeOrder { storeEverywhere(entry, forKey: key, policy: policy, sharable: sharable) }
    }

    /// Runs `change` (of the local tiers, queueing the same for the network tiers) in the order
    /// ``changeOrder`` keeps, when there are network tiers.
    private func inChangeOrder<T: Sendable>(_ change: () -> T) -> T {
        hasNetworkTiers ? changeOrder.withLock { _ in change() } : change()
    }

    /// Stores `entry` in the local tiers and queues it for the network tiers, or their removal of
    /// the key when the entry is not `sharable`.
    private func storeEverywhere(
        _ entry: CacheEntry, forKey key: CacheKey, policy: TierCache.StoragePolicy, sharable: Bool
    ) -> [(tierName: String, outcome: StoreOutcome)] {
        let encodedCount = entry.value.count
        let report = storage.storeLocally(entry, forKey: key, policy: policy)
        for tier in storage.tiers where !(tier is any LocalCacheTier) {
            // Past the budget of bytes waiting for network tiers, the key is removed there
            // instead: a removal holds no entry, and leaves nothing older than this store.
            let permitted = sharable && policy.permits(tier.medium) && networkWrites.reserve(encodedCount)
            // Only a permitted write holds the entry: a closure keeps what it names, whichever
            // branch runs, so a removal naming `entry` would hold its bytes outside the budget.
            let pending = permitted ? entry : nil
            networkWrites.send(key, releasing: permitted ? encodedCount : 0) {
                if let pending {
                    // A failed store leaves no older entry behind (as `TieredCache.store` does).
                    do { _ = try await tier.store(pending, forKey: key) } catch {
                        try? await tier.removeEntry(forKey: key)
                    }
                } else {
                    try? await tier.removeEntry(forKey: key)
                }
            }
        }
        // A tier the policy excludes, or that failed (counted in its statistics), is not listed.
        return report.outcomes.compactMap { tierName, outcome in
            switch outcome {
            case .stored: (tierName, .stored)
            case .refused(.policy): nil
            case .refused(let reason): (tierName, .refused(reason))
            case .failed: nil
            }
        }
    }

    /// Whether RFC 9111 lets a private cache (or a `shared` one) store `response` to `request`
    /// (§3), the request judged as a GET: the key function decides which methods are cached.
    static func mayStore(_ response: HTTPResponse, for request: HTTPRequest, shared: Bool) -> Bool {
        var request = request
        request.method = .get
        let requestDirectives = CacheControl(fieldValues: request.headerFields[values: .cacheControl])
        let directives = CacheControl(fieldValues: response.headerFields[values: .cacheControl])
        return Storability.reasonNotToStore(
            request: request, requestDirectives: requestDirectives, response: response, directives: directives,
            shared: shared) == nil
    }

    private static func stringUserInfo(_ userInfo: [AnyHashable: Any]?) -> [String: String] {
        var strings: [String: String] = [:]
        for (key, value) in userInfo ?? [:] {
            if let key = key.base as? String, let value = value as? String { strings[key] = value }
        }
        return strings
    }

    // MARK: Removing

    /// Removes the response stored for `request` from every tier (local ones now, network ones
    /// in the background).
    public override func removeCachedResponse(for request: URLRequest) {
        guard let key = cacheKey(for: request) else { return }
        removeEverywhere(key)
    }

    /// The data-task variant.
    public override func removeCachedResponse(for dataTask: URLSessionDataTask) {
        guard let request = dataTask.currentRequest ?? dataTask.originalRequest else { return }
        removeCachedResponse(for: request)
    }

    /// Empties every tier (local ones now, network ones in the background). A read racing it
    /// does not leave what it read from a lower tier promoted into one emptied before
    /// (`TieredCache.removeAllLocally()`): after a logout, nothing of the previous user's stays.
    public override func removeAllCachedResponses() {
        inChangeOrder {
            try? storage.removeAllLocally()
            for tier in storage.tiers where !(tier is any LocalCacheTier) {
                networkWrites.sendRemovingAll { try? await tier.removeAll() }
            }
        }
    }

    /// Tiers cannot be enumerated by date, so this empties the *local* tiers: nothing stored
    /// since `date` is answered afterwards, which is what callers of this method rely on (Apple's
    /// removes only those stored since `date`). Network tiers are left as they are: they are
    /// shared with other processes, whose entries an SDK clearing "the last hour" must not take
    /// away, and this class never reads them (see above). To empty them too, call
    /// ``removeAllCachedResponses()``. A date still to come removes nothing: nothing was stored
    /// since then.
    public override func removeCachedResponses(since date: Date) {
        guard date <= Date() else { return }
        try? storage.removeAllLocally()
    }

    private func removeEverywhere(_ key: CacheKey) {
        inChangeOrder {
            try? storage.removeLocalEntry(forKey: key)
            for tier in storage.tiers where !(tier is any LocalCacheTier) {
                networkWrites.send(key) { try? await tier.removeEntry(forKey: key) }
            }
        }
    }

    // MARK: Usage

    /// The summed capacity of the local memory tiers. A tier's capacity is fixed when it is made,
    /// so setting less than the memory tiers hold empties them instead, as `URLCache` discards
    /// what a lowered capacity no longer holds (apps set `memoryCapacity = 0` on a memory warning
    /// to free the memory; the disk and network tiers keep their copies). Setting more has no
    /// effect.
    public override var memoryCapacity: Int {
        get { localUsage(where: { $0 == .memory }).capacity }
        set {
            guard newValue < currentMemoryUsage else { return }
            for tier in storage.tiers where tier.medium == .memory {
                try? (tier as? any LocalCacheTier)?.removeAll()
            }
        }
    }

    /// The summed capacity of the local disk tiers. Setting it has no effect (an app that sets
    /// it at every launch would otherwise empty its disk cache each time).
    public override var diskCapacity: Int {
        get { localUsage(where: { $0 != .memory }).capacity }
        set {}
    }

    /// The bytes held by the local memory tiers.
    public override var currentMemoryUsage: Int { localUsage(where: { $0 == .memory }).bytes }

    /// The bytes held by the local disk tiers.
    public override var currentDiskUsage: Int { localUsage(where: { $0 != .memory }).bytes }

    private func localUsage(where isIncluded: (TierMedium) -> Bool) -> (bytes: Int, capacity: Int) {
        var total = (bytes: 0, capacity: 0)
        for tier in storage.tiers where isIncluded(tier.medium) {
            guard let local = tier as? any LocalCacheTier, let usage = try? Self.usage(of: local) else { continue }
            // Saturating: a memory tier bounded by its entry count has a capacity of `Int.max`.
            total.bytes = Self.saturatingSum(total.bytes, usage.bytes)
            total.capacity = Self.saturatingSum(total.capacity, usage.capacity)
        }
        return total
    }

    private static func usage(of tier: any LocalCacheTier) throws -> TierUsage { try tier.usage() }

    private static func saturatingSum(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? Int.max : sum
    }
}

/// Conversions from and to `URLCache.StoragePolicy`.
extension TierCache.StoragePolicy {
    /// The policy matching `URLCache.StoragePolicy`.
    public init(_ policy: URLCache.StoragePolicy) {
        switch policy {
        case .allowed: self = .allowed
        case .allowedInMemoryOnly: self = .allowedInMemoryOnly
        default: self = .notAllowed
        }
    }

    /// The matching `URLCache.StoragePolicy`.
    public var urlCachePolicy: URLCache.StoragePolicy {
        switch self {
        case .allowed: .allowed
        case .allowedInMemoryOnly: .allowedInMemoryOnly
        case .notAllowed: .notAllowed
        }
    }

    /// The more restrictive of `self` and `other`.
    func narrower(than other: StoragePolicy) -> StoragePolicy {
        if self == .notAllowed || other == .notAllowed { return .notAllowed }
        if self == .allowedInMemoryOnly || other == .allowedInMemoryOnly { return .allowedInMemoryOnly }
        return .allowed
    }
}
