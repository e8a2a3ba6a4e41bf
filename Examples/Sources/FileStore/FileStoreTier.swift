import Foundation
import Synchronization
import TierCache

/// A disk tier that keeps each entry in a file of its own, named by a digest of its key: the
/// design most Swift apps use today through Nuke's `DataCache`, PINCache or Kingfisher.
///
/// Each file holds a header (the key and the entry's dates) and the value; files are written to
/// a temporary name and renamed, so a crash leaves either the old entry or the new one. The index
/// of keys, sizes and recency lives in memory and is rebuilt from the files when the tier opens;
/// the least recently used entries leave first when the capacity is reached. An entry larger than
/// 5% of the capacity is refused, as every TierCache tier does.
public final class FileStoreTier: LocalCacheTier {
    public let name: String
    public let medium = TierMedium.disk
    private let directory: URL
    private let capacity: Int
    private let maxEntryBytes: Int
    private let counters: TierCounters
    private let index = Mutex(RecencyIndex())

    /// Opens (or creates) the store in `directory`, reading back the entries already there.
    public init(directory: URL, capacity: Int, name: String = "file-store") throws {
        guard capacity > 0 else { throw TierCacheError(.invalidConfiguration, "capacity must be positive") }
        self.directory = directory
        self.capacity = capacity
        self.maxEntryBytes = capacity / 20
        self.name = name
        self.counters = TierCounters(tierName: name)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var recovered = RecencyIndex()
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".entry") {
            let url = directory.appendingPathComponent(file)
            guard let data = try? Data(contentsOf: url), let record = EntryFile.decode(data) else {
                try? FileManager.default.removeItem(at: url)  // damaged or foreign: not an entry
                continue
            }
            recovered.touch(record.key, size: record.entry.size)
        }
        index.withLock { $0 = recovered }
    }

    private func url(for key: String) -> URL {
        directory.appendingPathComponent(KeyDigest.hex(of: key.utf8) + ".entry")
    }

    public func entry(forKey key: CacheKey) -> CacheEntry? {
        let known = index.withLock { $0.touch(key.rawValue) }
        let found =
            known
            ? (try? Data(contentsOf: url(for: key.rawValue))).flatMap(EntryFile.decode).flatMap { record in
                record.key == key.rawValue && !record.entry.metadata.isExpired(at: Date()) ? record.entry : nil
            } : nil
        counters.recordLookup(hit: found != nil)
        return found
    }

    public func store(_ entry: CacheEntry, forKey key: CacheKey) throws -> StoreOutcome {
        guard entry.size <= maxEntryBytes else {
            removeEntry(forKey: key)  // a refused store still replaces nothing stale
            let outcome = StoreOutcome.refused(.tooLarge(size: entry.size, limit: maxEntryBytes))
            counters.record(outcome)
            return outcome
        }
        guard !entry.metadata.isExpired(at: Date()) else {
            removeEntry(forKey: key)
            counters.record(.refused(.alreadyExpired))
            return .refused(.alreadyExpired)
        }
        let target = url(for: key.rawValue)
        let temporary = directory.appendingPathComponent(UUID().uuidString + ".partial")
        try EntryFile.encode(entry, key: key.rawValue).write(to: temporary)
        guard rename(temporary.path, target.path) == 0 else {  // atomic: the old file or the new one
            try? FileManager.default.removeItem(at: temporary)
            throw TierCacheError(.storageFailure, "cannot rename into \(target.path): errno \(errno)")
        }
        let evicted = index.withLock { index in
            index.touch(key.rawValue, size: entry.size)
            return index.evict(toFit: capacity, keeping: key.rawValue)
        }
        for victim in evicted { try? FileManager.default.removeItem(at: url(for: victim)) }
        counters.record(.stored)
        counters.recordEvictions(evicted.count)
        return .stored
    }

    public func removeEntry(forKey key: CacheKey) {
        guard index.withLock({ $0.remove(key.rawValue) }) else { return }
        try? FileManager.default.removeItem(at: url(for: key.rawValue))
    }

    public func removeAll() throws {
        let keys = index.withLock { index in
            defer { index = RecencyIndex() }
            return index.keys
        }
        for key in keys { try? FileManager.default.removeItem(at: url(for: key)) }
    }

    public func usage() -> TierUsage {
        index.withLock {
            TierUsage(bytes: $0.bytes, entries: $0.count, capacity: capacity, maxEntryBytes: maxEntryBytes)
        }
    }

    public func statistics() -> TierStatistics { counters.snapshot(usage: usage()) }
}
