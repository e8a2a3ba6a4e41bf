import Foundation
import TierCache
import TierCacheCompression
import TierCacheRecords

/// From entries to the bytes stored and back: compression (with the current dictionary for
/// small values), then sealing when the tier encrypts; opening, dictionary lookup and
/// verification on the way back.
extension LMDBTier {
    /// A record ready to store.
    struct EncodedRecord {
        /// The bytes to store (sealed when the tier encrypts).
        var stored: [UInt8]
        /// The compressed (or raw) value's bytes inside it, for the dictionary trainer.
        var payloadCount: Int
        /// The dictionary the value was compressed with, if any: it must still be in the store
        /// when the record is written (see ``LMDBTier/DictionaryRetired``).
        var dictionary: UsedDictionary?
        var usedDictionary: Bool { dictionary != nil }
    }

    /// A dictionary a record needs: its id, and the checksum of its bytes, which the store's row
    /// under that id must still record when the record is written.
    struct UsedDictionary {
        let id: UInt16
        let checksum: UInt32
    }

    /// A record about to be written names a dictionary that is no longer in the store: another
    /// store (in this process or another sharing the store) retired it after the value was
    /// compressed, or its id now names another dictionary. Written anyway, the record could never
    /// be read; it is compressed again.
    struct DictionaryRetired: Error {
        let id: UInt16
    }

    /// What a stored record turned out to be.
    enum Decoded {
        /// The entry; `reseal` holds the opened record when it was sealed under an older key.
        case entry(CacheEntry, reseal: [UInt8]?)
        /// Another key's record (a hash collision): a plain miss.
        case notThisKey
        /// Sealed under a key id this tier was not given: a miss, and the record left in place.
        /// Another process sharing the store holds that key (a rotation rolling out: one that
        /// knows only the old key deleted every record the new one sealed, and the other way
        /// round when the new one resealed on read); otherwise eviction takes it in its turn.
        case sealedUnderUnknownKey
        /// Unusable: a miss, and the record is deleted and counted by its reason.
        case unusable(Unusable)
        /// A value larger than the caller asked for, not decompressed.
        case tooLarge
    }

    enum Unusable {
        /// Past its expiry hint.
        case expired
        /// Fails to decode or verify.
        case damaged
        /// Compressed with a dictionary the store no longer holds.
        case missingDictionary
        /// Sealed, and does not open with the keys given.
        case unopenable
        /// In a format version this code does not read (a newer TierCache wrote it).
        case unknownFormat
    }

    /// The key `key` is stored under: its bytes, or the sealer's keyed hash of them.
    func storageKey(_ key: CacheKey) -> StorageKey {
        StorageKey(key, sealer: encryption)
    }

    /// Encodes `entry`, compressing small values with the current dictionary, and seals it.
    func encode(_ entry: CacheEntry, under key: StorageKey) throws -> EncodedRecord {
        let dictionary = dictionaries.current(forValueOf: entry.value.count)
        let record = StoredRecord.encode(
            entry, fullKey: key.fullKey, codec: codec, dictionary: dictionary, boundTo: key.bytes)
        let payloadCount = record.count - StoredRecord.headerSize - (key.fullKey?.count ?? 0)
        // The codec compresses alone when that is smaller: the header says whether it used it.
        let used = dictionary.flatMap { dictionary in
            record.withUnsafeBytes { StoredRecord.dictionaryID(ofEncoded: $0) } == dictionary.id
                ? UsedDictionary(id: dictionary.id, checksum: dictionary.dictionary.checksum) : nil
        }
        guard let encryption else {
            return EncodedRecord(stored: record, payloadCount: payloadCount, dictionary: used)
        }
        do {
            let sealed = try record.withUnsafeBytes { plain in
                try key.bytes.withUnsafeBytes { try SealedEnvelope.seal(plain, context: $0, with: encryption) }
            }
            return EncodedRecord(stored: sealed, payloadCount: payloadCount, dictionary: used)
        } catch {
            throw TierCacheError(
                .storageFailure, "sealing the entry for \(directory.path) failed", underlying: "\(error)")
        }
    }

    /// Decodes a stored record. `owner` is the key looked up (its full key is checked against the
    /// record's); `nil` skips that check. `now` `nil` skips the expiry check. A value over
    /// `largestValue` bytes is ``Decoded/tooLarge``, known from the header without decompressing.
    func decode(
        _ stored: UnsafeRawBufferPointer, storedUnder storageKey: UnsafeRawBufferPointer, owner: StorageKey?,
        now: Date?, largestValue: Int = .max, in txn: Transaction
    ) -> Decoded {
        // A plain record in an encrypted store (or a sealed one in a plain store) is not served:
        // anyone able to write the file could plant plain records otherwise.
        guard SealedEnvelope.isSealed(stored) == (encryption != nil) else { return .unusable(.unopenable) }
        guard let encryption else {
            return decodeOpened(
                stored, storedUnder: storageKey, owner: owner, now: now, largestValue: largestValue, in: txn,
                reseal: false)
        }
        let opened: [UInt8]
        do {
            opened = try SealedEnvelope.open(stored, context: storageKey, with: encryption)
        } catch RecordSealingError.unknownKey {
            return .sealedUnderUnknownKey
        } catch {
            return .unusable(.unopenable)
        }
        let stale = SealedEnvelope.keyID(of: stored) != encryption.currentKeyID
        let decoded = opened.withUnsafeBytes {
            decodeOpened(
                $0, storedUnder: storageKey, owner: owner, now: now, largestValue: largestValue, in: txn, reseal: stale)
        }
        if case .entry(let entry, reseal: .some) = decoded { return .entry(entry, reseal: opened) }
        return decoded
    }

    private func decodeOpened(
        _ record: UnsafeRawBufferPointer, storedUnder storageKey: UnsafeRawBufferPointer, owner: StorageKey?,
        now: Date?, largestValue: Int, in txn: Transaction, reseal: Bool
    ) -> Decoded {
        let header: StoredRecord.Header
        do {
            header = try StoredRecord.header(of: record, storedUnder: storageKey)
        } catch {
            return .unusable(error.isUnknownFormatVersion ? .unknownFormat : .damaged)
        }
        if let owner, !StoredRecord.belongs(header, to: owner) { return .notThisKey }
        if let now, header.metadata.isExpired(at: now) { return .unusable(.expired) }
        guard header.originalSize <= largestValue else { return .tooLarge }
        var dictionary: ZstdDictionary?
        if let id = header.dictionaryID {
            guard let found = dictionaries.dictionary(id, in: txn) else { return .unusable(.missingDictionary) }
            dictionary = found
        }
        let largest = StoredRecord.largestValue(inCapacity: capacity)
        var value = try? StoredRecord.value(of: header, codec: codec, dictionary: dictionary, largestValue: largest)
        if value == nil, let id = header.dictionaryID, let stale = dictionary,
            let current = dictionaries.redigested(id, replacing: stale, in: txn)
        {
            // The id names another dictionary than the one digested here (see `DictionaryShelf`).
            value = try? StoredRecord.value(of: header, codec: codec, dictionary: current, largestValue: largest)
        }
        guard let value else { return .unusable(.damaged) }
        let entry = CacheEntry(value: value, storedAt: header.metadata.storedAt, expiresAt: header.metadata.expiresAt)
        return .entry(entry, reseal: reseal ? [] : nil)
    }

    /// Seals an opened record again under the current key, if the store still holds `old`
    /// under `key` (lazy key rotation). Best effort: a failure leaves the old record, still readable.
    func reseal(_ opened: [UInt8], replacing old: [UInt8], under key: StorageKey) {
        guard let encryption else { return }
        let done = try? key.bytes.withUnsafeBytes { keyBytes -> Bool in
            let sealed = try opened.withUnsafeBytes { try SealedEnvelope.seal($0, context: keyBytes, with: encryption) }
            return try write { txn -> Bool in
                guard let current = try txn.get(environment.entries, keyBytes), current.elementsEqual(old) else {
                    return false
                }
                var state = try txn.writeState()
                state.used +=
                    accountedBytes(keyCount: keyBytes.count, recordCount: sealed.count)
                    - accountedBytes(keyCount: keyBytes.count, recordCount: old.count)
                try sealed.withUnsafeBytes { try txn.put(environment.entries, keyBytes, $0) }
                try txn.setWriteState(state)
                return true
            }
        }
        if done == true { counters.recordResealed() }
    }
}
