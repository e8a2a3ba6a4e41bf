import Foundation
import HTTPTypes
import TierCache

/// How the engine reads and writes the tiers: a response under its primary key, or, for a
/// resource whose responses carry `Vary`, a ``VariantIndex`` under the primary key and each
/// variant under a secondary key (RFC 9111 §4.1).
extension HTTPCache {
    /// The stored response that matches `request`'s secondary key, if any, from the tiers at
    /// `firstTier` and below (the ones above were read already and had nothing). Entries that
    /// fail to decode are removed and counted.
    /// A HEAD that finds no GET response is answered by a stored HEAD response
    /// (``headKey(_:)``), if there is one.
    func lookup(primaryKey: CacheKey, request: HTTPRequest, from firstTier: Int = 0) async -> Located? {
        if storage.isEntirelyLocal {
            return lookupLocally(primaryKey: primaryKey, request: request, tiers: firstTier..<Int.max)
        }
        if let found = await lookupResource(primaryKey, request: request, from: firstTier) { return found }
        guard request.method == .head else { return nil }
        return await lookupResource(Self.headKey(primaryKey), request: request, from: firstTier)
    }

    func lookupResource(_ primaryKey: CacheKey, request: HTTPRequest, from firstTier: Int = 0) async -> Located? {
        switch await read(primaryKey, from: firstTier) {
        case .response(let located)?:
            return Vary.matches(request, located.response.varyingFields) ? located : nil
        case .variants(let index)?:
            guard let key = Self.listedVariantKey(primaryKey, index, request),
                case .response(let located)? = await read(key, from: firstTier)
            else { return nil }
            return Vary.matches(request, located.response.varyingFields) ? located : nil
        case nil:
            return nil
        }
    }

    /// ``lookup(primaryKey:request:from:)`` through the local tiers only (those in `tiers`, or
    /// all): no suspension.
    /// `undecided` is set when a response was found whose tags' purge records must be read from a
    /// tier that suspends (then `nil` is returned: the caller reads it again asynchronously).
    func lookupLocally(
        primaryKey: CacheKey, request: HTTPRequest, tiers: Range<Int>? = nil, undecided: inout Bool
    ) -> Located? {
        if let found = lookupResourceLocally(primaryKey, request: request, tiers: tiers, undecided: &undecided) {
            return found
        }
        guard request.method == .head else { return nil }
        return lookupResourceLocally(Self.headKey(primaryKey), request: request, tiers: tiers, undecided: &undecided)
    }

    /// ``lookupLocally(primaryKey:request:tiers:undecided:)`` through tiers that all read without
    /// suspending (so nothing is undecided).
    func lookupLocally(primaryKey: CacheKey, request: HTTPRequest, tiers: Range<Int>? = nil) -> Located? {
        var undecided = false
        return lookupLocally(primaryKey: primaryKey, request: request, tiers: tiers, undecided: &undecided)
    }

    private func lookupResourceLocally(
        _ primaryKey: CacheKey, request: HTTPRequest, tiers: Range<Int>?, undecided: inout Bool
    ) -> Located? {
        switch readLocally(primaryKey, tiers: tiers, undecided: &undecided) {
        case .response(let located)?:
            return Vary.matches(request, located.response.varyingFields) ? located : nil
        case .variants(let index)?:
            guard let key = Self.listedVariantKey(primaryKey, index, request),
                case .response(let located)? = readLocally(key, tiers: tiers, undecided: &undecided)
            else { return nil }
            return Vary.matches(request, located.response.varyingFields) ? located : nil
        case nil:
            return nil
        }
    }

    /// Whether `candidate` is still the response stored under its key, as a 304 that selected it
    /// is about to update it: a response stored while the 304 was in flight (another request's
    /// 200) is the most recent (RFC 9111 §4), and one removed then (an unsafe method's
    /// invalidation, a purge) stays removed. Written back regardless, the old response, freshened,
    /// replaced either. (A change between this read and the update's write is not seen: the
    /// window is that of two tier calls, not of a round trip to the origin.)
    func isStillStored(_ candidate: Located) async -> Bool {
        guard case .response(let current)? = await read(candidate.key) else { return false }
        return current.response.storedAt == candidate.response.storedAt
            && current.response.responseTime == candidate.response.responseTime
    }

    /// The entry under `key`, decoded and, for a tagged response, judged by its tags' purge
    /// records (``judgeTags(_:)``); entries that fail to decode or were purged are removed.
    private func read(_ key: CacheKey, from firstTier: Int = 0) async -> DecodedEntry? {
        guard let entry = await storage.lookup(key, from: firstTier)?.entry else { return nil }
        guard let decoded = decode(entry, key: key) else {
            try? await storage.removeEntry(forKey: key)
            return nil
        }
        guard case .response(let found) = decoded else { return decoded }
        guard let located = usableHere(found) else { return nil }
        guard !located.response.tagStamps.isEmpty else { return .response(located) }
        guard let judged = await judgeTags(located) else {
            try? await storage.removeEntry(forKey: key)
            return nil
        }
        return .response(judged)
    }

    private func readLocally(_ key: CacheKey, tiers: Range<Int>?, undecided: inout Bool) -> DecodedEntry? {
        guard let entry = storage.localValue(forKey: key, tiers: tiers) else { return nil }
        guard let decoded = decode(entry, key: key) else {
            try? storage.removeLocalEntry(forKey: key)
            return nil
        }
        guard case .response(let found) = decoded else { return decoded }
        guard let located = usableHere(found) else { return nil }
        guard !located.response.tagStamps.isEmpty else { return .response(located) }
        switch judgeTagsLocally(located) {
        case .some(let judged?):
            return .response(judged)
        case .some(nil):
            try? storage.removeLocalEntry(forKey: key)
            return nil
        case nil:
            undecided = true
            return nil
        }
    }

    /// `located` as this engine may use it. A shared engine meets responses only a private cache
    /// stores in a tier a private engine writes too (or one it wrote before its mode changed):
    /// a `private` one, or one answering a request with `Authorization` that §3.5 does not let it
    /// reuse, is absent to it, and one holding a field `private` names, or `Set-Cookie`
    /// where this engine withholds cookies, is used without those fields, as if stored by a
    /// shared cache (RFC 9111 §5.2.2.7). Looked up as they were and refused only by the decision,
    /// they still served as stale fallbacks when the origin failed, and fresh ones served the
    /// writer's visitor's cookie. The stored entry is left as it is: it is its writer's.
    /// On a hit it reads facts parsed when the response was decoded: no field is looked up.
    private func usableHere(_ located: Located) -> Located? {
        guard configuration.mode == .shared else { return located }
        let facts = located.response.facts
        if located.response.isWhollyForPrivateCaches { return nil }
        let dropsCookie = withholdsCookies && facts.setsCookie
        guard dropsCookie || facts.holdsPrivateNamedFields else { return located }
        var shared = located.response
        for name in facts.directives.privateFieldNames {
            if let fieldName = HTTPField.Name(name) { shared.response.headerFields[values: fieldName] = [] }
        }
        if dropsCookie { shared.response.headerFields[values: .setCookie] = [] }
        return Located(response: shared, key: located.key, revalidatesFirst: located.revalidatesFirst)
    }

    /// The entry's decoded form, from its memo when a reader (or the write that stored it) left
    /// one there; `nil` (and counted) when it does not decode, for the caller to remove.
    private func decode(_ entry: CacheEntry, key: CacheKey) -> DecodedEntry? {
        if let form = entry.memo.value(as: DecodedForm.self), form.key == key { return form.entry }
        let decoded: DecodedEntry
        do {
            decoded = DecodedEntry(try StoredEntryCodec.decode(entry.value), key: key)
        } catch {
            counters.recordCorruptEntryRemoved()
            logger?.warning(
                "stored response failed to decode; removed (a miss)", metadata: ["key": "\(key)", "error": "\(error)"])
            return nil
        }
        remember(decoded, in: entry, key: key)
        return decoded
    }

    /// Leaves `decoded` in `entry`'s memo, if the budget for decoded forms has room.
    private func remember(_ decoded: DecodedEntry, in entry: CacheEntry, key: CacheKey) {
        guard let form = DecodedForm(key: key, entry: decoded, cost: entry.size, budget: decodedForms) else { return }
        entry.memo.setIfEmpty(form)
    }

    /// The key of the variant `request` selects, if `index` lists it. A variant the index no
    /// longer lists (one past its limit, one stored under other `Vary` names, one an invalidation
    /// or a purge did not reach because the index had let it go) is not read, whatever is still
    /// stored under its key.
    private static func listedVariantKey(
        _ primaryKey: CacheKey, _ index: VariantIndex, _ request: HTTPRequest
    ) -> CacheKey? {
        let key = variantKey(primaryKey, fields: Vary.varyingFields(index.fieldNames, of: request))
        return index.variantKeys.contains(key) ? key : nil
    }

    /// The key of the variant of `primaryKey` selected by `fields`. Long field values (a 64 KiB
    /// header) are replaced by a 128-bit hash to keep keys short; a collision cannot serve a wrong
    /// variant, because a lookup still checks the stored response's fields (``Vary/matches(_:_:)``).
    /// (A credential's value is a SHA-256 digest already, which is what the lookup compares:
    /// ``Vary/normalizedValue(of:in:)``.)
    ///
    /// `vary2`: variants stored by 0.1.0 and until preference lists kept the order of members of
    /// equal weight (``Vary/normalizedPreferenceList(_:)``) recorded `fr, en` as `en, fr`, and
    /// would answer `en, fr` with the response made for `fr, en`. Under keys of their own they are
    /// never read; an index still lists them until newer variants push them out, and servers of
    /// the earlier version sharing the tier in a rolling deploy keep reading and writing their own.
    static func variantKey(_ primaryKey: CacheKey, fields: [StoredResponse.VaryingField]) -> CacheKey {
        let secondary = fields.map { "\u{1F}\($0.name)=\($0.value.map { "\"\($0)\"" } ?? "-")" }.joined()
        guard secondary.utf8.count > 512 else { return CacheKey(primaryKey, appending: "\u{1F}vary2" + secondary) }
        return CacheKey(primaryKey, appending: "\u{1F}vary2#" + KeyDigest.hex(of: secondary.utf8))
    }

    /// Stores a response from `exchange` if RFC 9111 §3, the hooks and the storage policy allow;
    /// returns whether any tier kept it.
    @discardableResult
    /// `partialContent`: the response is a 206 holding part of the representation (RFC 9111
    /// §3.3), judged as the complete response with its fields would be.
    func storeIfAllowed(
        _ exchange: Exchange, for request: HTTPRequest, primaryKey: CacheKey, partialContent: Bool = false
    ) async -> Bool {
        let directives = CacheControl(fieldValues: exchange.response.headerFields[values: .cacheControl])
        var judged = exchange.response
        if partialContent { judged.status = .ok }
        if let reason = reasonNotToStore(judged, directives: directives, for: request) {
            // A response that may not be stored must not leave an older one in its place.
            if Self.refusalRemovesStored(reason, directives: directives) { await remove(primaryKey: primaryKey) }
            return false
        }
        let candidate = shapedForStorage(
            exchange.response, directives: directives, body: exchange.body, request: request,
            responseTime: exchange.responseTime, userInfo: [:])
        if let reason = reasonHooksForbidStoring(candidate) {
            counters.recordNotStorable(reason)
            await remove(primaryKey: primaryKey)
            return false
        }
        if let refusal = exchange.tags.refusal {
            counters.recordTagListRefused()
            logger?.notice(
                "response not stored: its tag list is over the bound",
                metadata: ["key": "\(primaryKey)", "tags": "\(refusal)"])
            await remove(primaryKey: primaryKey)
            return false
        }
        guard candidate.storagePolicy != .notAllowed else {
            counters.recordRefusedByPolicy()
            await remove(primaryKey: primaryKey)
            return false
        }
        let varyNames = Vary.fieldNames(of: candidate.response)
        var stored = StoredResponse(
            response: candidate.response, body: candidate.body, requestTime: exchange.requestTime,
            responseTime: exchange.responseTime, storedAt: exchange.responseTime,
            varyingFields: Vary.varyingFields(varyNames, of: request), userInfo: candidate.userInfo,
            storagePolicy: candidate.storagePolicy)
        stored.tagStamps = exchange.tags.tags.map { TagStamp(tag: $0, epoch: 0) }
        // Only where it changes what a shared engine may do: a response §3.5 lets any cache reuse
        // stays in format version 2, which earlier releases sharing the tier read.
        stored.answeredAuthorization =
            request.headerFields[.authorization] != nil && !directives.allowsSharedReuseWithAuthorization

        if varyNames.isEmpty {
            return await write(stored, under: primaryKey, policy: candidate.storagePolicy)
        }
        let variantKey = Self.variantKey(primaryKey, fields: stored.varyingFields)
        var index = VariantIndex(fieldNames: varyNames, variantKeys: [])
        var dropped: [CacheKey] = []
        if case .variants(let existing)? = await read(primaryKey) {
            if existing.fieldNames == varyNames {
                index.variantKeys = existing.variantKeys.filter { $0 != variantKey }
            } else {
                dropped = existing.variantKeys.filter { $0 != variantKey }
            }
        }
        index.variantKeys.append(variantKey)
        if index.variantKeys.count > VariantIndex.limit {
            dropped += index.variantKeys.prefix(index.variantKeys.count - VariantIndex.limit)
            index.variantKeys.removeFirst(index.variantKeys.count - VariantIndex.limit)
        }
        guard await write(stored, under: variantKey, policy: candidate.storagePolicy) else { return false }
        let kept = await writeEntry(.variants(index), under: primaryKey, policy: candidate.storagePolicy)
        // Unlisted, they are never read again (``listedVariantKey(_:_:_:)``): their room is freed.
        for key in dropped { try? await storage.removeEntry(forKey: key) }
        return kept
    }

    /// Why the store hooks made `candidate`'s response one RFC 9111 §3 forbids storing, or nil:
    /// their `no-store` (``StoreHook/overrideCacheControl(_:where:)``'s way to keep a response
    /// out), or in a shared cache their `private`. §3 judged the response as the origin sent it
    /// before the hooks ran, and stored with such a field it was served (a `no-store` response
    /// with `Last-Modified` got a heuristic lifetime). A hook can restrict what the origin allowed,
    /// not allow what it forbade; a hook's veto, as ``StoreHook/Candidate/storagePolicy``'s,
    /// removes the copy stored before.
    private func reasonHooksForbidStoring(_ candidate: StoreHook.Candidate) -> Storability.Reason? {
        guard !configuration.storeHooks.isEmpty else { return nil }
        let directives = CacheControl(fieldValues: candidate.response.headerFields[values: .cacheControl])
        if directives.noStore, !directives.mustUnderstand { return .noStore }
        if configuration.mode == .shared, directives.isPrivate { return .privateResponse }
        return nil
    }

    /// Why RFC 9111 §3 forbids storing `response` to `request` (counted), or nil.
    /// Whether a shared cache keeps `Set-Cookie` out of what it stores (every choice but
    /// ``SetCookieInSharedCache/stored``).
    private var withholdsCookies: Bool {
        configuration.mode == .shared && configuration.setCookieInSharedCache != .stored
    }

    /// Whether a response refused for `reason` (with its own `directives`) also removes the copy
    /// stored before: the response's `no-store` or `Vary: *` says the origin's answer is no longer
    /// one to keep. A request's `no-store` forbids storing this exchange only, and "does not apply
    /// to the already stored response" (RFC 9111 §5.2.1.5); had it removed it, any client of a
    /// shared cache could empty it, one request a resource.
    static func refusalRemovesStored(_ reason: Storability.Reason, directives: CacheControl) -> Bool {
        switch reason {
        case .varyStar: true
        // The response's own no-store, unless `must-understand` set it aside (§5.2.2.3).
        case .noStore: directives.noStore && !directives.mustUnderstand
        default: false
        }
    }

    /// Why `response` may not be stored, counted; nil when it may. `freshening`: a 304 or HEAD
    /// response updates a stored one, whose copy then leaves out a cookie it sets
    /// (``shapedForStorage(_:directives:body:request:responseTime:userInfo:freshening:)``) rather
    /// than stay stale and revalidate on every request.
    private func reasonNotToStore(
        _ response: HTTPResponse, directives: CacheControl, for request: HTTPRequest, freshening: Bool = false
    ) -> Storability.Reason? {
        var reason = Storability.reasonNotToStore(
            request: request, requestDirectives: CacheControl(fieldValues: request.headerFields[values: .cacheControl]),
            response: response, directives: directives, shared: configuration.mode == .shared)
        if reason == nil, !freshening, configuration.mode == .shared,
            configuration.setCookieInSharedCache == .responseNotStored, response.headerFields[.setCookie] != nil,
            // Withheld from the stored copy anyway (§5.2.2.4, §5.2.2.7): nothing to leak.
            !(directives.privateFieldNames + directives.noCacheFieldNames).contains(where: {
                $0.lowercased() == "set-cookie"
            })
        {
            reason = .setCookie
        }
        if let reason { counters.recordNotStorable(reason) }
        return reason
    }

    /// `response` as the cache keeps it (RFC 9111 §3.1): without hop-by-hop fields, without the
    /// fields `directives` name in `no-cache="…"` (and, in a shared cache, `private="…"`), which
    /// must not be reused without revalidation (§5.2.2.4, §5.2.2.7), without `Set-Cookie` in a
    /// shared cache told so (``HTTPCache/SetCookieInSharedCache/storedWithoutCookie``) or, unless
    /// told ``HTTPCache/SetCookieInSharedCache/stored``, when `freshening` (the cookie a 304 sets
    /// is its visitor's, and one the stored copy kept from before goes with it), with a `Date`,
    /// then shaped by the store hooks.
    private func shapedForStorage(
        _ response: HTTPResponse, directives: CacheControl, body: Data, request: HTTPRequest, responseTime: Date,
        userInfo: [String: String], freshening: Bool = false
    ) -> StoreHook.Candidate {
        var response = response
        response.headerFields = HopByHop.removing(from: response.headerFields)
        var withheld =
            directives.noCacheFieldNames + (configuration.mode == .shared ? directives.privateFieldNames : [])
        if withholdsCookies, freshening || configuration.setCookieInSharedCache == .storedWithoutCookie {
            withheld.append("set-cookie")
        }
        for name in withheld {
            if let fieldName = HTTPField.Name(name) { response.headerFields[values: fieldName] = [] }
        }
        if response.headerFields[.date] == nil { response.headerFields[.date] = HTTPDate.format(responseTime) }
        var candidate = StoreHook.Candidate(
            request: request, response: response, body: body,
            storagePolicy: configuration.storagePolicies.policy(forScheme: request.scheme ?? ""), userInfo: userInfo)
        for hook in configuration.storeHooks { hook.apply(to: &candidate) }
        return candidate
    }

    /// Writes `freshened`, a stored response whose fields a 304 or a HEAD response updated
    /// (``Validation/freshen(_:with:requestTime:responseTime:)``), as a new response is written:
    /// judged by §3 and shaped by ``shapedForStorage`` under its updated fields. §3.2 updates a
    /// stored response "except header fields excepted from storage in Section 3.1": a 304 that
    /// carries `Set-Cookie` under `private="Set-Cookie"` must not put the cookie in a shared
    /// cache's copy, nor undo a hook such as ``StoreHook/stripAuthenticationFields(additionalFields:)``.
    /// A 304 the cache may not store leaves the stored copy as it was (stale, so revalidated
    /// again), or removes it as ``storeIfAllowed(_:for:primaryKey:partialContent:)`` would; a
    /// hook's veto removes it, and so does an update that changes the `Vary` names. The body is
    /// the stored one, already shaped when it was stored: a hook's change to it is not kept.
    /// Returns whether any tier kept the update.
    @discardableResult
    func writeFreshened(_ freshened: StoredResponse, under key: CacheKey, request: HTTPRequest) async -> Bool {
        // Judged as the GET's response, as every response the cache keeps is (a HEAD's included).
        var request = request
        request.method = .get
        let directives = CacheControl(fieldValues: freshened.response.headerFields[values: .cacheControl])
        if let reason = reasonNotToStore(freshened.response, directives: directives, for: request, freshening: true) {
            if Self.refusalRemovesStored(reason, directives: directives) { await removeResource(key) }
            return false
        }
        let candidate = shapedForStorage(
            freshened.response, directives: directives, body: freshened.body, request: request,
            responseTime: freshened.responseTime, userInfo: freshened.userInfo, freshening: true)
        // An update whose `Vary` names other request fields than the stored response was chosen
        // by (a 304 adding `Vary: Origin`): its key no longer says which requests it answers
        // (§4.1), and kept there it would be served to every one. It goes; the next request
        // stores a response keyed by the new names. Compared after the hooks, as the stored
        // names were (a hook that drops `User-Agent` from `Vary` keeps its responses).
        if Set(Vary.fieldNames(of: candidate.response)) != Set(freshened.varyingFields.map(\.name)) {
            await removeResource(key)
            return false
        }
        if let reason = reasonHooksForbidStoring(candidate) {
            counters.recordNotStorable(reason)
            await removeResource(key)
            return false
        }
        guard candidate.storagePolicy != .notAllowed else {
            counters.recordRefusedByPolicy()
            await removeResource(key)
            return false
        }
        var kept = freshened
        kept.response = candidate.response
        kept.userInfo = candidate.userInfo
        kept.storagePolicy = candidate.storagePolicy
        return await write(kept, under: key, policy: candidate.storagePolicy)
    }

    /// Writes a response, its tags stamped with their current epochs; returns whether any tier
    /// kept it.
    @discardableResult
    func write(_ stored: consuming StoredResponse, under key: CacheKey, policy: StoragePolicy) async -> Bool {
        // Consumed, so that stamping the tags writes the caller's array rather than a copy of it.
        var stored = stored
        if !stored.tagStamps.isEmpty { await stamp(&stored.tagStamps) }
        let kept = await writeEntry(.response(stored), under: key, policy: policy)
        counters.recordWrite(kept: kept, policy: policy)
        return kept
    }

    @discardableResult
    func writeEntry(_ entry: StoredEntry, under key: CacheKey, policy: StoragePolicy) async -> Bool {
        await writeEntryReporting(entry, under: key, policy: policy).isStoredAnywhere
    }

    /// ``writeEntry(_:under:policy:)``, with what each tier did.
    func writeEntryReporting(
        _ entry: StoredEntry, under key: CacheKey, policy: StoragePolicy
    ) async -> TieredCache.StoreReport {
        // After the change, so an answer built from the old entry meanwhile is not reused.
        defer { generation.add(1, ordering: .releasing) }
        let value = CacheEntry(value: StoredEntryCodec.encode(entry), storedAt: configuration.clock.now())
        // The first hit from memory then skips decoding what was just encoded.
        remember(DecodedEntry(entry, key: key), in: value, key: key)
        return await storage.store(value, forKey: key, policy: policy)
    }

    /// Every stored response of the resource under `primaryKey`: the one response, or each
    /// variant its index lists (for the 304 selection of RFC 9111 §4.3.4).
    func storedResponses(of primaryKey: CacheKey) async -> [Located] {
        switch await read(primaryKey) {
        case .response(let located)?:
            return [located]
        case .variants(let index)?:
            var found: [Located] = []
            for key in index.variantKeys { if case .response(let located)? = await read(key) { found.append(located) } }
            return found
        case nil:
            return []
        }
    }

    /// Removes a resource: its primary entry and every variant it lists, and the same for its
    /// HEAD responses and its partial content. Returns the first failure of a tier (the others
    /// are removed all the same), which the tiered cache has counted: a purge reports it.
    @discardableResult
    func remove(primaryKey: CacheKey) async -> TierCacheError? {
        var firstFailure: TierCacheError?
        for key in [primaryKey, Self.headKey(primaryKey), Self.partialKey(primaryKey)] {
            if let failure = await removeResource(key), firstFailure == nil { firstFailure = failure }
        }
        return firstFailure
    }

    /// Removes the entry under `key` and every variant it lists; returns the first failure.
    @discardableResult
    func removeResource(_ key: CacheKey) async -> TierCacheError? {
        defer { generation.add(1, ordering: .releasing) }
        var firstFailure: TierCacheError?
        var keys = [key]
        if case .variants(let index)? = await read(key) { keys = index.variantKeys + keys }
        for key in keys {
            do { try await storage.removeEntry(forKey: key) } catch {
                if firstFailure == nil { firstFailure = error }
            }
        }
        return firstFailure
    }
}
