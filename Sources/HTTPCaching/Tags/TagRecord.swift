import Foundation

/// What the tiers keep for one tag: the epoch entries stamped now carry, and the epochs a soft
/// purge retired (entries stamped with one are stale since its purge, not gone). An entry stamped
/// with any other epoch, or whose tag has no record at all (never written, evicted, removed), is
/// gone: a lost record can only turn hits into misses, never revive a purged entry.
struct TagRecord: Hashable, Sendable {
    /// The epoch entries stored now are stamped with.
    var epoch: UInt64
    /// Epochs soft purges retired, newest first, each with the time of its purge.
    var softlyPurged: [SoftlyPurged]

    struct SoftlyPurged: Hashable, Sendable {
        var epoch: UInt64
        var purgedAt: Date
    }

    /// Soft purges remembered per tag; an entry stamped before older ones is gone instead of
    /// stale (it then costs a fetch rather than allowing a stale serve).
    static let softPurgesKept = 8

    /// A record with a fresh random epoch and no soft purges: a new tag, or a hard purge.
    static func fresh() -> TagRecord {
        TagRecord(epoch: randomEpoch(), softlyPurged: [])
    }

    /// This record after a soft purge at `now`: a new epoch, the current one retired as stale.
    func softlyPurged(at now: Date) -> TagRecord {
        var retired = [SoftlyPurged(epoch: epoch, purgedAt: now)] + softlyPurged
        if retired.count > Self.softPurgesKept { retired.removeLast(retired.count - Self.softPurgesKept) }
        return TagRecord(epoch: Self.randomEpoch(), softlyPurged: retired)
    }

    /// What an entry stamped with `stamp` is under this record.
    func standing(of stamp: UInt64) -> TagStanding {
        if stamp == epoch { return .current }
        if let retired = softlyPurged.first(where: { $0.epoch == stamp }) { return .stale(since: retired.purgedAt) }
        return .gone
    }

    /// Random and never zero (zero marks a tag not yet stamped): two processes that create a
    /// tag's record at once pick different epochs, and the one written last wins, so entries
    /// stamped with the other are misses, not wrongly kept.
    private static func randomEpoch() -> UInt64 {
        var generator = SystemRandomNumberGenerator()
        return UInt64.random(in: 1...UInt64.max, using: &generator)
    }
}

/// How a tag's record judges an entry stamped with one of its epochs.
enum TagStanding: Hashable, Sendable {
    /// Not purged since it was stored.
    case current
    /// Softly purged at that time: stale since then.
    case stale(since: Date)
    /// Purged, or its tag's record was lost.
    case gone
    /// Its tag's record could not be read (and nothing was known of it): purged or not, nobody
    /// can say, so it is revalidated before use; stale since then at the latest (`staleSince`: an
    /// earlier soft purge of another of its tags).
    case unverifiable(staleSince: Date?)
}

/// The stored format of a ``TagRecord``, little-endian: magic `TCTG`, version 1, the epoch, the
/// number of soft purges, then each one's epoch and time (seconds since 2001 as a `Double`).
enum TagRecordCodec {
    private static let magic: [UInt8] = Array("TCTG".utf8)
    private static let version: UInt8 = 1

    static func encode(_ record: TagRecord) -> [UInt8] {
        var bytes = magic + [version]
        append(record.epoch, to: &bytes)
        bytes.append(UInt8(clamping: record.softlyPurged.count))
        for retired in record.softlyPurged.prefix(Int(UInt8.max)) {
            append(retired.epoch, to: &bytes)
            append(retired.purgedAt.timeIntervalSinceReferenceDate.bitPattern, to: &bytes)
        }
        return bytes
    }

    /// The record in `bytes`, or `nil` when they are not one (damage, another format): the
    /// caller treats that as a lost record.
    static func decode(_ bytes: [UInt8]) -> TagRecord? {
        guard bytes.count >= 14, Array(bytes[0..<4]) == magic, bytes[4] == version else { return nil }
        let count = Int(bytes[13])
        guard bytes.count == 14 + count * 16 else { return nil }
        let epoch = read(bytes, at: 5)
        guard epoch != 0 else { return nil }
        var retired: [TagRecord.SoftlyPurged] = []
        for index in 0..<count {
            let offset = 14 + index * 16
            let seconds = Double(bitPattern: read(bytes, at: offset + 8))
            guard seconds.isFinite else { return nil }
            retired.append(
                .init(epoch: read(bytes, at: offset), purgedAt: Date(timeIntervalSinceReferenceDate: seconds)))
        }
        return TagRecord(epoch: epoch, softlyPurged: retired)
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    private static func read(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        bytes[offset..<(offset + 8)].reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }
}
