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
/// and at most until its `Age` would change, which is within one second.
///
/// Its bodies are copies beside the tiers' own, so it is bounded in bytes as well as in entries:
/// at most ``capacity`` entries and ``maximumBodyBytes`` of bodies, a body over an eighth of that
/// is not kept (one answer would take the room of many), and a memo that would go over either
/// bound starts over.
final class AnswerMemo: Sendable {
    struct Entry: Sendable {
        var head: HTTPResponseHead
        var body: ByteBuffer
        var generation: UInt64
        var validUntil: ContinuousClock.Instant
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var bodyBytes = 0
    }

    /// The most entries kept.
    let capacity: Int
    /// The most bytes of bodies kept, all entries together.
    let maximumBodyBytes: Int
    private let state = Locked(State())

    init(capacity: Int = 1024, maximumBodyBytes: Int = 32 << 20) {
        self.capacity = capacity
        self.maximumBodyBytes = maximumBodyBytes
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
        state.withLock { state in
            guard let entry = state.entries[key], entry.generation == generation, now < entry.validUntil else {
                return nil
            }
            return entry
        }
    }

    func remember(_ entry: Entry, forKey key: String) {
        let size = entry.body.readableBytes
        guard size <= maximumBodyBytes / 8 else { return }
        state.withLock { state in
            if let replaced = state.entries.removeValue(forKey: key) { state.bodyBytes -= replaced.body.readableBytes }
            if state.entries.count >= capacity || state.bodyBytes + size > maximumBodyBytes {
                state.entries.removeAll(keepingCapacity: true)
                state.bodyBytes = 0
            }
            state.entries[key] = entry
            state.bodyBytes += size
        }
    }

    /// The bytes of bodies kept now.
    var bodyBytes: Int { state.withLock { $0.bodyBytes } }
}
