import Foundation
import HTTPTypes
import TierCache

extension HTTPCache {
    /// What a purge does to the stored responses it covers.
    public enum PurgeMode: String, Hashable, Sendable {
        /// They are gone: the next request for each is a miss.
        case hard
        /// They are marked stale: each is revalidated before it is served fresh again, and
        /// meanwhile `stale-while-revalidate`, `stale-if-error` and the offline fallback may still
        /// serve it, so an origin that is down or slow is not hit by every client at once.
        case soft
    }

    /// Purges every stored response that carried one of `tags` (see ``Tagging``), in every tier
    /// and, through the lowest tier, in every process that shares it.
    ///
    /// It costs one small record written per tag, whatever the number of responses tagged: the
    /// responses themselves are judged, and removed if gone, when next looked up. A purge by this
    /// engine takes effect here at once; another engine sharing the lowest tier sees it within
    /// its ``Tagging/recheckInterval``.
    ///
    /// ```swift
    /// try await cache.purge(tags: ["product-42"])                 // gone
    /// try await cache.purge(tags: ["catalog"], mode: .soft)       // stale, revalidated on use
    /// ```
    ///
    /// - Throws: ``HTTPCacheError/Code/purgeFailed`` when the lowest tier could not record the
    ///   purge of some tag (it is then not purged; the others are).
    public func purge(tags: some Sequence<String>, mode: PurgeMode = .hard) async throws(HTTPCacheError) {
        defer { generation.add(1, ordering: .releasing) }
        var failures: [String] = []
        for tag in Set(tags) {
            let now = configuration.clock.now()
            let next: TagRecord
            switch mode {
            case .hard:
                next = .fresh()
            case .soft:
                let current: TagRecord?
                do { current = try await readTagRecord(tag) } catch {
                    failures.append("\(tag): \(error)")
                    continue
                }
                // Without a record, nothing stamped with the tag is current: nothing to mark.
                guard let current else {
                    tagLedger.learn(nil, for: tag, now: now)
                    counters.recordPurge(ofTag: true, mode: mode)
                    continue
                }
                next = current.softlyPurged(at: now)
            }
            do {
                try await writeTagRecord(next, for: tag, now: now)
            } catch {
                failures.append("\(tag): \(error)")
                continue
            }
            tagLedger.learn(next, for: tag, now: now)
            counters.recordPurge(ofTag: true, mode: mode)
        }
        guard failures.isEmpty else {
            throw HTTPCacheError(
                .purgeFailed, "the lowest tier did not record the purge of \(failures.joined(separator: "; "))")
        }
    }

    /// Purges the stored responses for `url` (every variant, its HEAD response and its partial
    /// content) from every tier: removed (``PurgeMode/hard``) or marked stale
    /// (``PurgeMode/soft``). Another process's memory and disk tiers keep their copy until it
    /// expires, unless they are kept coherent with a shared Redis tier (TierCacheRedis's
    /// `RedisCoherence`), which drops it there at once.
    ///
    /// - Throws: ``HTTPCacheError/Code/invalidRequest`` when `url` has no cache key (no scheme
    ///   or host, or the configured key function excludes it);
    ///   ``HTTPCacheError/Code/purgeFailed`` when a tier failed to remove (or mark) a response,
    ///   which it may still hold (the other tiers are purged all the same).
    public func purge(url: URL, mode: PurgeMode = .hard) async throws(HTTPCacheError) {
        // `HTTPRequest(url:)` traps on a URL without a scheme: checked first.
        guard url.scheme != nil, url.host != nil, let primaryKey = primaryKey(for: HTTPRequest(method: .get, url: url))
        else {
            throw HTTPCacheError(.invalidRequest, "\(url) has no cache key")
        }
        try await purge(primaryKey: primaryKey, mode: mode)
    }

    /// Purges the resource `request` targets (its method aside), keyed as a GET of the same
    /// target: for a front end that has a request rather than a `URL` (the caching proxy's purge
    /// endpoint). ``purge(url:mode:)`` goes through `URL`, which encodes again a target holding
    /// bytes a URI may not (`?tag[]=new`), so that it named another key than the one the
    /// resource is stored under.
    ///
    /// - Throws: as ``purge(url:mode:)`` does.
    public func purge(target request: HTTPRequest, mode: PurgeMode = .hard) async throws(HTTPCacheError) {
        var get = request
        get.method = .get
        guard let primaryKey = primaryKey(for: get) else {
            throw HTTPCacheError(.invalidRequest, "\(request.path ?? "the request") has no cache key")
        }
        try await purge(primaryKey: primaryKey, mode: mode)
    }

    /// ``purge(url:mode:)`` for a resource's primary key. Every tier is tried; a tier that failed
    /// (a shared tier timing out) may still hold the response, and the purge throws
    /// ``HTTPCacheError/Code/purgeFailed``. A soft purge that reads nothing under a key removes
    /// it, since a tier that answers failed reads with misses may still hold it.
    func purge(primaryKey: CacheKey, mode: PurgeMode) async throws(HTTPCacheError) {
        var failures: [String] = []
        if mode == .hard {
            if let failure = await remove(primaryKey: primaryKey) { failures.append("\(failure)") }
        } else {
            let now = configuration.clock.now()
            for key in [primaryKey, Self.headKey(primaryKey), Self.partialKey(primaryKey)] {
                let stored = await storedResponses(of: key)
                if stored.isEmpty {
                    // Nothing read, which a tier that answers failed reads with misses (a Redis
                    // timeout) also says: removed there, or the purge fails, rather than a
                    // success that left the shared tier's copy unmarked.
                    if let failure = await removeResource(key) { failures.append("\(failure)") }
                }
                for located in stored {
                    var marked = located.response
                    marked.invalidatedAt = min(marked.invalidatedAt ?? now, now)
                    let report = await writeEntryReporting(
                        .response(marked), under: located.key, policy: marked.storagePolicy)
                    for (tier, outcome) in report.outcomes {
                        if case .failed(let error) = outcome { failures.append("\(tier): \(error)") }
                    }
                }
            }
        }
        guard failures.isEmpty else {
            throw HTTPCacheError(
                .purgeFailed, "\(primaryKey) may still be stored: \(failures.joined(separator: "; "))")
        }
        counters.recordPurge(ofTag: false, mode: mode)
    }
}
