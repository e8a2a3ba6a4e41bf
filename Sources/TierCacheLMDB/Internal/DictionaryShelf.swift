import TierCache
import TierCacheCompression

/// The dictionaries a tier has digested, by id, and the one it compresses new values with.
///
/// Digesting a dictionary costs far more than using one, so each is digested once, on first
/// need: a record naming an id not yet on the shelf (one trained by another process sharing the
/// store) is looked up in the store. An id the store does not hold is remembered as missing:
/// ids are never reused, so it cannot appear later.
final class DictionaryShelf: Sendable {
    private struct State {
        var digested: [UInt16: ZstdDictionary] = [:]
        var missing: Set<UInt16> = []
        var current: EntryRecord.Dictionary?
    }

    private let state = Locked(State())
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

    /// Makes `dictionary` (digested from `row`) the one new values use.
    func install(_ dictionary: ZstdDictionary, id: UInt16) {
        state.withLock {
            $0.digested[id] = dictionary
            $0.missing.remove(id)
            $0.current = EntryRecord.Dictionary(id: id, dictionary: dictionary)
        }
    }

    /// Forgets dictionary `id` (deleted from the store).
    func retire(_ id: UInt16) {
        state.withLock {
            $0.digested[id] = nil
            $0.missing.insert(id)
            if $0.current?.id == id { $0.current = nil }
        }
    }

    /// Dictionary `id`, digesting it from the store on first need; `nil` when the store does not
    /// hold it (or holds it sealed under a key not at hand, or damaged).
    func dictionary(_ id: UInt16, in txn: Transaction) -> ZstdDictionary? {
        let known: ZstdDictionary?? = state.withLock { state in
            if let dictionary = state.digested[id] { return .some(dictionary) }
            return state.missing.contains(id) ? .some(nil) : nil
        }
        if let known { return known }
        let row: DictionaryRow?
        do {
            row = try txn.dictionaryRow(id, sealer: sealer)
        } catch {
            // The store could not be read: nothing is known about the row, so nothing is noted.
            return nil
        }
        guard let bytes = row?.bytes, let dictionary = try? ZstdDictionary(bytes: bytes, level: level) else {
            // A sealed row that did not open may open with the right key later; only a row that
            // is absent (or fails to decode) is gone for good.
            if row == nil { state.withLock { _ = $0.missing.insert(id) } }
            return nil
        }
        state.withLock { $0.digested[id] = dictionary }
        return dictionary
    }
}
