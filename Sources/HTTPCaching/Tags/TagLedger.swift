import Foundation
@_spi(TierCacheInternals) import TierCache

/// What this engine last read (or wrote) of each tag's ``TagRecord``, and when: a stamp or a
/// judgement uses it while it is younger than ``HTTPCache/Tagging/recheckInterval``, and reads
/// the record from the lowest tier again after.
///
/// Only a cache of what the tiers hold, so it may forget: past ``limit`` tags it is emptied,
/// and the records are read again as they are needed.
final class TagLedger: Sendable {
    struct Knowledge: Sendable {
        /// `nil`: the tier held no record (every entry stamped for the tag is gone).
        var record: TagRecord?
        var readAt: Date
    }

    private let known = Locked<[String: Knowledge]>([:])
    private let recheckInterval: TimeInterval
    static let limit = 1 << 16

    init(recheckInterval: TimeInterval) {
        self.recheckInterval = max(0, recheckInterval)
    }

    /// What is known of `tag` and still trusted at `now`; `nil` when it must be read.
    func knowledge(of tag: String, now: Date) -> Knowledge? {
        withTrusted(now: now) { $0(tag) }
    }

    /// `body` given what is known and trusted at `now` of any tag (`nil`: it must be read), under
    /// one lock for all the tags it asks about: a hit on a tagged response judges every tag.
    func withTrusted<Result>(now: Date, _ body: ((String) -> Knowledge?) -> Result) -> Result {
        known.withLock { known in
            body { tag in known[tag].flatMap { isTrusted($0, at: now) ? $0 : nil } }
        }
    }

    private func isTrusted(_ knowledge: Knowledge, at now: Date) -> Bool {
        now.timeIntervalSince(knowledge.readAt) < recheckInterval
    }

    /// What was last known of `tag`, however old: for when the tier cannot be read.
    func lastKnowledge(of tag: String) -> Knowledge? {
        known.withLock { $0[tag] }
    }

    /// Records what the tier holds for `tag` as of `now`.
    func learn(_ record: TagRecord?, for tag: String, now: Date) {
        known.withLock { Self.insert(Knowledge(record: record, readAt: now), for: tag, into: &$0) }
    }

    /// The record to stamp `tag` with when the tier holds none: the one another task of this
    /// engine adopted meanwhile, if it is still trusted, else `proposed` (learned here, before it
    /// is written, so concurrent stores of a new tag agree on one epoch).
    func adopt(_ proposed: TagRecord, for tag: String, now: Date) -> TagRecord {
        known.withLock { known in
            if let existing = known[tag], let record = existing.record, isTrusted(existing, at: now) { return record }
            Self.insert(Knowledge(record: proposed, readAt: now), for: tag, into: &known)
            return proposed
        }
    }

    /// Sets `tag`'s knowledge, emptying the table first when a new tag would pass ``limit``.
    private static func insert(_ knowledge: Knowledge, for tag: String, into known: inout [String: Knowledge]) {
        if known.count >= limit, known[tag] == nil { known.removeAll(keepingCapacity: true) }
        known[tag] = knowledge
    }
}
