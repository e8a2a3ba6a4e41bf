import Foundation
import TierCache

/// How the engine stamps stored responses with their tags' epochs, and judges them when read:
/// the purge records live in the storage's lowest tier (the one every process of a fleet shares),
/// one per tag, and ``TagLedger`` remembers them for ``HTTPCache/Tagging/recheckInterval``.
extension HTTPCache {
    /// What a tag's record says, once known: the record (or none), or that the tier could not be
    /// read and nothing was known before.
    enum KnownRecord {
        case record(TagRecord?)
        case unverifiable
    }

    /// The key a tag's record is kept under: apart from every response's (a primary key never
    /// starts with a unit separator: ``HTTPCache/primaryKey(for:)`` refuses one).
    static func tagKey(_ tag: String) -> CacheKey {
        (try? CacheKey("\u{1F}tag\u{1F}" + tag)) ?? CacheKey(digestOf: ("\u{1F}tag\u{1F}" + tag).utf8)
    }

    // MARK: Judging a stored response

    /// `located` as its tags' records judge it: as it is, marked stale since a soft purge, or
    /// `.some(nil)` when purged (the caller removes it); `nil`, undecided, when some record must
    /// be read and the lowest tier cannot be read without suspending.
    func judgeTagsLocally(_ located: Located) -> Located?? {
        let now = configuration.clock.now()
        var known: [String: KnownRecord] = [:]
        while true {
            switch standing(of: located.response.tagStamps, known: known, now: now) {
            case .judged(let standing): return .some(applying(standing, to: located))
            case .mustRead(let tag):
                guard let tier = localTagTier else { return nil }
                known[tag] = learnedRecord(for: tag, now: now) {
                    try tier.entry(forKey: Self.tagKey(tag)).flatMap { TagRecordCodec.decode($0.value) }
                }
            }
        }
    }

    /// ``judgeTagsLocally(_:)``, reading records from the lowest tier whatever it is.
    func judgeTags(_ located: Located) async -> Located? {
        let now = configuration.clock.now()
        var known: [String: KnownRecord] = [:]
        while true {
            switch standing(of: located.response.tagStamps, known: known, now: now) {
            case .judged(let standing): return applying(standing, to: located)
            case .mustRead(let tag): known[tag] = await readKnownRecord(tag, now: now)
            }
        }
    }

    private enum Judgement {
        case judged(TagStanding)
        case mustRead(String)
    }

    /// The standing of a response stamped with `stamps`, from `known` and the ledger; the first
    /// tag whose record must be read first, if any.
    private func standing(of stamps: [TagStamp], known: [String: KnownRecord], now: Date) -> Judgement {
        tagLedger.withTrusted(now: now) { trusted in
            var staleSince: Date?
            var unverifiable = false
            for stamp in stamps {
                let standing: TagStanding
                switch known.isEmpty ? nil : known[stamp.tag] {
                case .record(let record)?:
                    standing = record?.standing(of: stamp.epoch) ?? .gone
                case .unverifiable?:
                    // The tier cannot say: revalidate before serving, and let stale-if-error serve.
                    standing = .unverifiable(staleSince: nil)
                case nil:
                    guard let knowledge = trusted(stamp.tag) else { return .mustRead(stamp.tag) }
                    standing = knowledge.record?.standing(of: stamp.epoch) ?? .gone
                }
                switch standing {
                case .current: continue
                case .gone: return .judged(.gone)
                case .stale(let since): staleSince = min(staleSince ?? since, since)
                case .unverifiable: unverifiable = true
                }
            }
            if unverifiable { return .judged(.unverifiable(staleSince: staleSince)) }
            return .judged(staleSince.map { .stale(since: $0) } ?? .current)
        }
    }

    /// `tag`'s record read from the lowest tier, learned as ``learnedRecord(for:now:_:)`` says.
    private func readKnownRecord(_ tag: String, now: Date) async -> KnownRecord {
        let read: Result<TagRecord?, any Error>
        do { read = .success(try await readTagRecord(tag)) } catch { read = .failure(error) }
        return learnedRecord(for: tag, now: now) { try read.get() }
    }

    /// What `read` gave for `tag`, learned: a failed read keeps what was known before (however
    /// old), else leaves the record unverifiable.
    private func learnedRecord(for tag: String, now: Date, _ read: () throws -> TagRecord?) -> KnownRecord {
        do {
            let record = try read()
            tagLedger.learn(record, for: tag, now: now)
            return .record(record)
        } catch {
            logger?.warning(
                "the lowest tier could not be read for a tag's purge record",
                metadata: ["tag": "\(tag)", "error": "\(error)"])
            return tagLedger.lastKnowledge(of: tag).map { .record($0.record) } ?? .unverifiable
        }
    }

    private func applying(_ standing: TagStanding, to located: Located) -> Located? {
        switch standing {
        case .current:
            return located
        case .gone:
            counters.recordPurgedEntryRemoved()
            return nil
        case .stale(let since):
            if let marked = located.response.invalidatedAt, marked <= since { return located }
            var response = located.response
            response.invalidatedAt = since
            return Located(response: response, key: located.key)
        case .unverifiable(let staleSince):
            // Stale from now at the latest (as a soft purge now would leave it), and revalidated
            // before use: a stale-while-revalidate window would otherwise serve it at once, on
            // every request while the tier stays unreadable, though it may have been purged.
            let now = configuration.clock.now()
            var response = located.response
            response.invalidatedAt = [response.invalidatedAt, staleSince, now].compactMap { $0 }.min()
            return Located(response: response, key: located.key, revalidatesFirst: true)
        }
    }

    // MARK: Stamping a response being stored

    /// Stamps `result` with its tags' current epochs; a tag without a record gets a new one.
    func stamp(_ result: inout [TagStamp]) async {
        let now = configuration.clock.now()
        // What a response freshened after a 304 was stamped with, kept where a record cannot be
        // read now (its stamp is as good as it was; 0 reads as purged).
        let previous = result.map(\.epoch)
        // Tags whose record is trusted and present, stamped under one lock; the rest one by one.
        let unstamped = tagLedger.withTrusted(now: now) { trusted in
            var unstamped = false
            for index in result.indices {
                // A stamp written before (a revalidated response) is stamped anew too.
                result[index].epoch = trusted(result[index].tag)?.record?.epoch ?? 0
                if result[index].epoch == 0 { unstamped = true }
            }
            return unstamped
        }
        guard unstamped else { return }
        for index in result.indices where result[index].epoch == 0 {
            let tag = result[index].tag
            var record: TagRecord?
            if let knowledge = tagLedger.knowledge(of: tag, now: now) {
                record = knowledge.record
            } else {
                switch await readKnownRecord(tag, now: now) {
                case .record(let read):
                    record = read
                case .unverifiable:
                    // An unreadable record is not a missing one: a new one written over the
                    // fleet's would make every response stamped with it a miss everywhere (and
                    // this engine, trusting it, would delete them): a hard purge nobody asked
                    // for. A new response's stamp stays 0, which no record's epoch is: it reads
                    // as purged, a miss, and replaces what was stored under its key meanwhile.
                    result[index].epoch = previous[index]
                    continue
                }
            }
            if record == nil {
                let adopted = tagLedger.adopt(.fresh(), for: tag, now: now)
                do { try await writeTagRecord(adopted, for: tag, now: now) } catch {
                    // Entries stamped with it will be misses once the ledger reads the tier again.
                    logger?.warning(
                        "the lowest tier did not keep a new tag's record",
                        metadata: ["tag": "\(tag)", "error": "\(error)"])
                }
                record = adopted
            }
            result[index].epoch = record?.epoch ?? 0
        }
    }

    // MARK: The records in the lowest tier

    func readTagRecord(_ tag: String) async throws -> TagRecord? {
        // A failed read must throw, not read as a missing record, which purges the tag (a Redis
        // tier answers failed reads with misses by default).
        guard let tier = tagTier, let entry = try await tier.entryReportingFailures(forKey: Self.tagKey(tag)) else {
            return nil
        }
        return TagRecordCodec.decode(entry.value)
    }

    func writeTagRecord(_ record: TagRecord, for tag: String, now: Date) async throws {
        guard let tier = tagTier else { return }
        let outcome = try await tier.store(
            CacheEntry(value: TagRecordCodec.encode(record), storedAt: now), forKey: Self.tagKey(tag))
        guard outcome.isStored else {
            throw HTTPCacheError(.purgeFailed, "the tier \(tier.name) refused the record: \(outcome)")
        }
    }
}
