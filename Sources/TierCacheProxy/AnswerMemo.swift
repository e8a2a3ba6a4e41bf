import NIOCore
import NIOHTTP1
@_spi(TierCacheInternals) import TierCache

/// Answers built from stored responses, reused for identical requests within the second their
/// `Age` and `Cache-Status` ttl stay the same: a repeated hit costs one dictionary lookup instead
/// of building the request, consulting the engine and assembling the response fields again.
///
/// Only plain requests are memoized (GET or HEAD with none of the fields that change the answer:
/// preconditions, ranges, cache directives, credentials, the debug key), and only answers from a
/// stored response without `Vary`. An entry is reused while the engine's
/// `HTTPCache.storageGeneration` is unchanged (no store, revalidation or invalidation since)
/// and at most until its `Age` would change, which is within one second. At most
/// ``capacity`` entries; when full it starts over.
final class AnswerMemo: Sendable {
    struct Entry: Sendable {
        var head: HTTPResponseHead
        var body: ByteBuffer
        var generation: UInt64
        var validUntil: ContinuousClock.Instant
    }

    /// The most entries kept (each holds one response body, at most the proxy's cacheable size).
    let capacity: Int
    private let entries = Locked<[String: Entry]>([:])

    init(capacity: Int = 1024) {
        self.capacity = capacity
    }

    /// Request fields that make an answer specific to the request.
    private static let disqualifyingFields = [
        "cache-control", "pragma", "if-none-match", "if-modified-since", "if-match", "if-unmodified-since", "if-range",
        "range",
        "authorization", "connection", CachingProxy.cacheKeyRequest.canonicalName,
    ]

    /// The memo key of `request`, or `nil` when its answer may not be reused (or when its header
    /// section is over `maximumHeaderBytes`, or it has more than one Host field: the full path
    /// answers those with 431 and 400).
    static func key(for request: HTTPRequestHead, maximumHeaderBytes: Int = .max) -> String? {
        guard request.method == .GET || request.method == .HEAD else { return nil }
        var headerBytes = request.uri.utf8.count
        var hostFields = 0
        for (name, value) in request.headers {
            headerBytes += name.utf8.count + value.utf8.count + 4
            if name.utf8.count == 4, name.lowercased() == "host" { hostFields += 1 }
        }
        // Over the limit: 431 on the full path; more than one Host: 400 there (RFC 9112 §3.2).
        guard headerBytes <= maximumHeaderBytes, hostFields <= 1 else { return nil }
        for name in disqualifyingFields where request.headers.contains(name: name) { return nil }
        return request.method == .GET ? request.uri : "HEAD " + request.uri
    }

    func answer(forKey key: String, generation: UInt64, now: ContinuousClock.Instant) -> Entry? {
        entries.withLock { entries in
            guard let entry = entries[key], entry.generation == generation, now < entry.validUntil else { return nil }
            return entry
        }
    }

    func remember(_ entry: Entry, forKey key: String) {
        entries.withLock { entries in
            if entries.count >= capacity, entries[key] == nil { entries.removeAll(keepingCapacity: true) }
            entries[key] = entry
        }
    }
}
