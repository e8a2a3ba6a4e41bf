import Synchronization
@_spi(TierCacheInternals) import TierCache
import TierCacheCompression
import TierCacheRecords

/// The dictionaries a tier has digested, by id, and the one it compresses new values with.
///
/// Digesting a dictionary costs far more than using one, so each is digested once, on first
/// need: a record naming an id not yet on the shelf (one trained by another process sharing the
/// store) is looked up in the store. An id the store does not hold is not remembered: a record
/// naming it is deleted when met, so the look-up (one read of a small table) happens once per
/// such record, and an id can come back: ids are reused once all 65,535 have been used, and start
/// again in a store made anew. For the same reason an id can name another dictionary than the one
/// digested here: a writer finds out in its write transaction (``forget(_:digested:)``), a reader
/// when a value fails to decompress (``redigested(_:replacing:in:)``).
final class DictionaryShelf: Sendable {
    private struct State {
        var digested: [UInt16: ZstdDictionary] = [:]
        var current: EntryRecord.Dictionary?
    }

    private let state = Locked(State())
    /// Set when the current dictionary is forgotten (``takeLostCurrent()``).
    private let lostCurrent = Atomic<Bool>(false)
    let level: Int32
    let sealer: (any RecordSealing)?
    /// Values larger than this are compressed without a dictionary.
    let maximumValueSize: Int

    init(level: Int32, sealer: (any RecordSealing)?, maximumValueSize: Int) {
        self.level = level
        self.sealer = sealer
        self.maximumValueSize = maximumValueSize
    }

    /// The dictionary to compress a value of `count` bytes with, if any.
    func current(forValueOf count: Int) -> EntryRecord.Dictionary? {
        guard count <= maximumValueSize else { return nil }
        return state.withLock { $0.current }
    }

    /// The id of the dictionary new values use, if any.
    var currentID: UInt16? { state.withLock { $0.current?.id } }

    /// Makes `dictionary` (digested from `row`) the one new values use.
    func install(_ dictionary: ZstdDictionary, id: UInt16) {
        state.withLock {
            $0.digested[id] = dictionary
            $0.current = EntryRecord.Dictionary(id: id, dictionary: dictionary)
        }
    }

    /// Forgets dictionary `id` (and stops compressing with it): deleted from the store, or its
    /// row now holds another dictionary, which a later look-up reads afresh. With `digested`,
    /// only if that is the dictionary on the shelf under `id` (another thread may have read the
    /// new one already).
    func forget(_ id: UInt16, digested: ZstdDictionary? = nil) {
        state.withLock {
            if let digested, $0.digested[id] !== digested { return }
            $0.digested[id] = nil
            if $0.current?.id == id {
                $0.current = nil
                lostCurrent.store(true, ordering: .relaxed)
            }
        }
    }

    /// Whether the dictionary new values used was forgotten (``forget(_:digested:)``) and none
    /// installed since; the note is cleared, so one caller recovers
    /// (`LMDBTier.recoverCurrentDictionaryIfLost()`). One relaxed load while nothing was lost: a
    /// store asks before compressing each value.
    func takeLostCurrent() -> Bool {
        guard lostCurrent.load(ordering: .relaxed) else { return false }
        return state.withLock { state in
            lostCurrent.store(false, ordering: .relaxed)
            return state.current == nil
        }
    }

    /// Notes the current dictionary lost again (its recovery failed: the next store retries).
    func noteLostCurrent() {
        lostCurrent.store(true, ordering: .relaxed)
    }

    /// The dictionary the store now holds under `id`, when it is not `stale` (a value failed to
    /// decompress with `stale`, and the row may since have been given to another dictionary);
    /// `nil` when the row still holds `stale`, or holds nothing usable.
    func redigested(_ id: UInt16, replacing stale: ZstdDictionary, in txn: Transaction) -> ZstdDictionary? {
        let recorded = try? DictionaryRow.key(id).withUnsafeBytes { key in
            try txn.get(txn.environment.meta, key).flatMap(DictionaryRow.checksum(ofRow:))
        }
        guard let recorded, recorded != stale.checksum else { return nil }
        forget(id, digested: stale)
        return dictionary(id, in: txn)
    }

    /// Dictionary `id`, digesting it from the store on first need; `nil` when the store does not
    /// hold it (or holds it sealed under a key not at hand, damaged, or could not be read).
    func dictionary(_ id: UInt16, in txn: Transaction) -> ZstdDictionary? {
        if let known = state.withLock({ $0.digested[id] }) { return known }
        guard let row = try? txn.dictionaryRow(id, sealer: sealer), let bytes = row.bytes,
            let dictionary = try? ZstdDictionary(bytes: bytes, level: level)
        else { return nil }
        state.withLock { $0.digested[id] = dictionary }
        return dictionary
    }
}
