import Foundation
import Synchronization
import TierCache

/// A disk tier that keeps each entry in a file of its own, named by a digest of its key: the
/// design most Swift apps use today through Nuke's `DataCache`, PINCache or Kingfisher.
///
/// Each file holds a header (the key and the entry's dates) and the value; files are written to
/// a temporary name and renamed, so a crash leaves either the old entry or the new one. The index
/// of keys, sizes and recency lives in memory and is rebuilt from the files when the tier opens
/// (removing temporary files a crash left); the least recently used entries leave first when the
/// capacity is reached. Each entry counts its whole file (header, key and value) against the
/// capacity, and an entry whose file would be larger than 5% of the capacity is refused, as every
/// TierCache tier does. A full disk refuses the store (out of space) rather than failing it. One
/// tier at a time uses a directory: the index is this process's, and opening removes any
/// temporary file, another writer's included.
public final class FileStoreTier: LocalCacheTier {
    public let name: String
    public let medium = TierMedium.disk
    private let directory: URL
    private let capacity: Int
    private let maxEntryBytes: Int
    private let counters: TierCounters
    private let clock: CacheClock
    private let index = Mutex(RecencyIndex())

    /// Opens (or creates) the store in `directory`, reading back the entries already there.
    /// `clock` says when entries expire (the system's by default; tests pass one they advance).
    public init(directory: URL, capacity: Int, name: String = "file-store", clock: CacheClock = .system) throws {
        guard capacity > 0 else { throw TierCacheError(.invalidConfiguration, "capacity must be positive") }
        self.directory = directory
        self.capacity = capacity
        self.maxEntryBytes = capacity / 20
        self.name = name
        self.clock = clock
        self.counters = TierCounters(tierName: name)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var recovered = RecencyIndex()
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let url = directory.appendingPathComponent(file)
            if file.hasSuffix(".partial") {
                try? FileManager.default.removeItem(at: url)  // a write a crash cut short
                continue
            }
            guard file.hasSuffix(".entry") else { continue }
            guard let data = try? Data(contentsOf: url), let record = EntryFile.decode(data) else {
                try? FileManager.default.removeItem(at: url)  // damaged or foreign: not an entry
                continue
            }
            recovered.touch(record.key, size: data.count)
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
                record.key == key.rawValue && !record.entry.metadata.isExpired(at: clock.now()) ? record.entry : nil
            } : nil
        counters.recordLookup(hit: found != nil)
        return found
    }

    public func store(_ entry: CacheEntry, forKey key: CacheKey) throws -> StoreOutcome {
        let size = EntryFile.size(of: entry, key: key.rawValue)
        guard size <= maxEntryBytes else { return refuse(.tooLarge(size: size, limit: maxEntryBytes), key) }
        guard !entry.metadata.isExpired(at: clock.now()) else { return refuse(.alreadyExpired, key) }
        let file = EntryFile.encode(entry, key: key.rawValue)
        let target = url(for: key.rawValue)
        let temporary = directory.appendingPathComponent(UUID().uuidString + ".partial")
        do {
            try file.write(to: temporary)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            if Self.isOutOfSpace(error) { return refuse(.outOfSpace(detail: "\(error)"), key) }
            throw TierCacheError(.storageFailure, "cannot write \(temporary.path): \(error)")
        }
        guard rename(temporary.path, target.path) == 0 else {  // atomic: the old file or the new one
            let code = errno
            try? FileManager.default.removeItem(at: temporary)
            throw TierCacheError(.storageFailure, "cannot rename into \(target.path): errno \(code)")
        }
        let evicted = index.withLock { index in
            index.touch(key.rawValue, size: file.count)
            return index.evict(toFit: capacity, keeping: key.rawValue)
        }
        for victim in evicted { try? FileManager.default.removeItem(at: url(for: victim)) }
        counters.record(.stored)
        counters.recordEvictions(evicted.count)
        return .stored
    }

    /// Refuses a store for `reason`; the key's older entry goes, so no reader sees it after.
    private func refuse(_ reason: RefusalReason, _ key: CacheKey) -> StoreOutcome {
        removeEntry(forKey: key)
        let outcome = StoreOutcome.refused(reason)
        counters.record(outcome)
        return outcome
    }

    /// Whether a write failed for want of room (a full disk, a used-up quota, the process's file
    /// size limit): a refusal, not a failure of the store.
    static func isOutOfSpace(_ error: any Error) -> Bool {
        if let cocoa = error as? CocoaError, cocoa.code == .fileWriteOutOfSpace { return true }
        let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
        let code =
            (error as? POSIXError).map { Int($0.code.rawValue) }
            ?? underlying.flatMap { $0.domain == NSPOSIXErrorDomain ? $0.code : nil }
        return code.map { [ENOSPC, EDQUOT, EFBIG].map(Int.init).contains($0) } ?? false
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
