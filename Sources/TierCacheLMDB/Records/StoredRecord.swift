import TierCacheCompression
import TierCacheRecords

/// LMDB stores the shared ``EntryRecord`` format; long keys are hashed, so a record carries its
/// full key and must be checked against the one asked for.
typealias StoredRecord = EntryRecord

extension EntryRecord {
    /// Whether the record belongs to `key` (the stored full key matches, or neither has one).
    static func belongs(_ header: Header, to key: StorageKey) -> Bool {
        switch (header.fullKey, key.fullKey) {
        case (nil, nil): true
        case (let stored?, let wanted?): stored.elementsEqual(wanted)
        default: false
        }
    }

}
