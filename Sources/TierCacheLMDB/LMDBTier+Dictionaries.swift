import Foundation
import TierCache
import TierCacheCompression

/// A zstd dictionary the store holds, as ``LMDBTier/storedDictionaries()`` and
/// `tiercache inspect` report it.
public struct LMDBDictionaryInfo: Sendable, Codable, Hashable {
    /// The id records name it by.
    public var id: UInt16
    /// Its size.
    public var bytes: Int
    /// When it was trained (or the app's dictionary first stored).
    public var createdAt: Date
    /// Whether the app provided it (``LMDBTier/DictionaryCompression/provided(_:maximumValueSize:)``).
    public var isProvided: Bool
    /// Whether it is stored sealed (the store is encrypted).
    public var isSealed: Bool
    /// The samples it was trained on (0 when provided).
    public var samples: Int
    /// Its samples' compression ratio with it, measured when it was trained (`nil` for a
    /// provided dictionary).
    public var ratioOnSamples: Double?
    /// The same samples' ratio compressed alone (`nil` for a provided dictionary).
    public var ratioOnSamplesWithout: Double?
}

extension LMDBTier {
    /// Checks the dictionary settings; returns the largest value compressed with a dictionary
    /// (0 when off).
    static func validate(_ setting: DictionaryCompression, capacity: Int) throws(TierCacheError) -> Int {
        switch setting {
        case .off:
            return 0
        case .automatic(let training):
            guard training.maximumValueSize > 0, training.dictionarySize >= 256,
                // Divided, not multiplied: a dictionarySize above Int.max / 8 overflowed here.
                training.sampleBytes / 8 >= training.dictionarySize,
                training.retrainBelow > 0, training.retrainBelow <= 1, training.maximumDictionaries >= 1
            else {
                throw TierCacheError(
                    .invalidConfiguration,
                    "dictionary training needs a positive maximumValueSize, a dictionarySize of at least 256 bytes, "
                        + "sampleBytes of at least 8 times the dictionary, retrainBelow in (0, 1] and maximumDictionaries of at least 1; got \(training)"
                )
            }
            return training.maximumValueSize
        case .provided(let bytes, let maximumValueSize):
            guard !bytes.isEmpty, bytes.count <= capacity / 16, maximumValueSize > 0 else {
                throw TierCacheError(
                    .invalidConfiguration,
                    "a provided dictionary must hold 1 to \(capacity / 16) bytes (1/16 of the capacity) and maximumValueSize must be "
                        + "positive; got \(bytes.count) bytes and \(maximumValueSize)")
            }
            return maximumValueSize
        }
    }

    /// How many dictionaries a store keeps when the app provides its own: the newest and the
    /// three before it, so that records compressed with the dictionaries of the last few
    /// releases stay readable, while an app that ships a new one with every release does not
    /// pile them up against the capacity (each may take 1/16 of it).
    static let providedDictionariesKept = 4

    /// Makes the newest of `rows` (the stored dictionaries, oldest first) that zstd can digest the
    /// current dictionary, with the ratio it was trained at; whether one was. A row that passed
    /// its checksum but that zstd cannot digest is skipped (records naming it are dictionary
    /// misses), never a reason not to open.
    @discardableResult
    func adoptNewestDictionary(of rows: [DictionaryRow]) -> Bool {
        // By creation time: ids are reused after 65,535, so their order is not their age.
        for row in rows.sorted(by: { $0.createdAt < $1.createdAt }).reversed() {
            guard let bytes = row.bytes else { continue }
            guard let digested = try? ZstdDictionary(bytes: bytes, level: codec.level) else {
                logger?.warning(
                    "stored dictionary unusable; skipped", metadata: ["tier": "\(name)", "dictionary": "\(row.id)"])
                continue
            }
            dictionaries.install(digested, id: row.id)
            trainer?.adopt(trainedRatio: row.ratioWith)
            return true
        }
        return false
    }

    /// After the dictionary new values used was forgotten (retired by another tier on the store,
    /// its id given to another dictionary, or every trained one removed by `removeAll()` here or
    /// in another process), before the next value is compressed: without this the tier went on
    /// without a dictionary until it was opened again, since training, its trained ratio still
    /// set, was judged on values compressed with a dictionary and never came due.
    /// - Automatic: the newest the store holds becomes current, as at open; with none (every
    ///   trained one removed), the trainer starts over, its samples, which may be fragments of the
    ///   removed values, forgotten.
    /// - Provided: the app's dictionary is found among the stored ones, or stored again.
    func recoverCurrentDictionaryIfLost() {
        guard dictionaries.takeLostCurrent() else { return }
        if let trainer {
            guard let rows = try? environment.read({ txn in try txn.dictionaryRows(sealer: encryption) }) else {
                // Unread (readers full, say), not known to be empty: the next store tries again.
                dictionaries.noteLostCurrent()
                return
            }
            if !adoptNewestDictionary(of: rows) { trainer.forgetSamples() }
        } else if let providedDictionary {
            do {
                try installProvidedDictionary(providedDictionary)
            } catch {
                // Tried again by the next store.
                dictionaries.noteLostCurrent()
                logger?.warning(
                    "the app's dictionary could not be stored again; values are compressed without it",
                    metadata: ["tier": "\(name)", "error": "\(error)"])
            }
        }
    }

    /// The dictionaries the store holds, oldest first.
    public func storedDictionaries() throws -> [LMDBDictionaryInfo] {
        try environment.read { txn in try txn.dictionaryRows(sealer: encryption).map(\.info) }
    }

    /// At open: the newest stored dictionary that zstd can digest becomes the current one
    /// (automatic), or the app's dictionary is found among the stored ones or stored (provided).
    /// When the tier encrypts, dictionaries stored plain or sealed under an older key are sealed
    /// under the current one first, so dropping the old key later loses no dictionary and no
    /// fragment of a value stays in the clear.
    func prepareDictionaries(_ setting: DictionaryCompression) throws(TierCacheError) {
        do {
            try sealDictionariesUnderCurrentKey()
            let rows = try environment.read { txn in try txn.dictionaryRows(sealer: encryption) }
            switch setting {
            case .off:
                return
            case .automatic:
                if !adoptNewestDictionary(of: rows) { seedSamplesFromStore() }
            case .provided(let bytes, _):
                try installProvidedDictionary(bytes, storedRows: rows)
            }
        } catch let error as TierCacheError {
            throw error
        } catch let error as ZstdDictionary.Failure {
            throw TierCacheError(.invalidConfiguration, "the dictionary is unusable: \(error)")
        } catch {
            throw TierCacheError(
                .storageFailure, "could not prepare the dictionaries of \(directory.path)", underlying: "\(error)")
        }
    }

    /// Makes the app's dictionary current: the stored row holding it (among `storedRows`, read
    /// now when not given), or a new one.
    private func installProvidedDictionary(_ bytes: [UInt8], storedRows: [DictionaryRow]? = nil) throws {
        let digested = try ZstdDictionary(bytes: bytes, level: codec.level)
        let rows = try storedRows ?? environment.read { txn in try txn.dictionaryRows(sealer: encryption) }
        if let stored = rows.last(where: { $0.isProvided && $0.bytes == bytes }) {
            dictionaries.install(digested, id: stored.id)
        } else {
            let row = DictionaryRow(
                id: 0, isProvided: true, samples: 0, createdAt: clock.now(), ratioWith: nil, ratioWithout: nil,
                bytes: bytes, isSealed: false, storedSize: 0)
            try install(row, digested: digested, keepingAtMost: Self.providedDictionariesKept)
        }
    }

    /// Without a dictionary yet, the small values already stored are the first samples, up to a
    /// ring's worth: the next store trains if they fill it. Decompresses at most that many bytes
    /// of values, once per open, and only until a dictionary exists: a record is skipped by its
    /// stored size or its header before anything is decompressed (a store of large values never
    /// fills the ring, and every open decompressed all of it).
    private func seedSamplesFromStore() {
        guard let trainer else { return }
        let settings = trainer.settings
        // A small value's record: its header, its full key (kept in the record under hashed key
        // names and for keys over 511 bytes), its payload (never larger than the value: a
        // compressed payload is kept only when smaller), and a seal's envelope (its header, a
        // nonce and a tag: 36 bytes with AES-GCM and ChaChaPoly; 64 more for a sealer of your own).
        let largestSmallRecord =
            StoredRecord.headerSize + CacheKey.maximumUTF8Length + settings.maximumValueSize
            + SealedEnvelope.headerSize + 64
        let now = clock.now()
        try? environment.read { txn in
            var gathered = 0
            try txn.forEach(
                environment.entries,
                while: { key, stored in
                    guard stored.count <= largestSmallRecord else { return true }
                    if case .entry(let entry, _) = decode(
                        stored, storedUnder: key, owner: nil, now: now, largestValue: settings.maximumValueSize, in: txn
                    ),
                        !entry.value.isEmpty
                    {
                        trainer.seed(entry.value)
                        gathered += entry.value.count
                    }
                    return gathered < settings.sampleBytes
                })
        }
    }

    /// Seals, under the current key, every dictionary row sealed under another key (when the
    /// tier encrypts), deletes the plain ones of a store turning to encryption, and marks the
    /// store as encrypted (``encryptedMark``). Looks in a read transaction first, so an open with
    /// nothing to do writes nothing; what it then writes it reads again in the write transaction.
    private func sealDictionariesUnderCurrentKey() throws {
        guard let encryption else { return }
        let (pending, marked) = try environment.read { txn in
            (
                try pendingDictionaryChanges(in: txn, encryption: encryption),
                try txn.metaValue(Self.encryptedMark) != nil
            )
        }
        guard !pending.toSeal.isEmpty || !pending.toDelete.isEmpty || !marked else { return }
        try write { txn in
            let pending = try pendingDictionaryChanges(in: txn, encryption: encryption)
            var state = try txn.writeState()
            for row in pending.toSeal {
                let encoded = try row.encoded(sealer: encryption)
                try DictionaryRow.key(row.id).withUnsafeBytes { key in
                    try encoded.withUnsafeBytes { try txn.put(environment.meta, key, $0) }
                }
                state.used += dictionaryCost(encoded.count) - dictionaryCost(row.storedSize)
            }
            for row in pending.toDelete {
                try DictionaryRow.key(row.id).withUnsafeBytes { _ = try txn.delete(environment.meta, $0) }
                state.used -= dictionaryCost(row.storedSize)
            }
            try txn.setWriteState(state)
            try txn.setMetaValue(Self.encryptedMark, 1)
        }
    }

    /// The meta row that says the store was opened with encryption once: from then on a plain
    /// dictionary row is left alone, never read (see `pendingDictionaryChanges(in:encryption:)`), even
    /// in a store left empty.
    static let encryptedMark = "encrypted"

    /// The dictionaries, opened, that are sealed under a key other than the current one (those
    /// sealed under a key not at hand are left: they cannot be opened), and the plain rows to
    /// delete.
    ///
    /// Plain rows are deleted while the store turns to encryption (not yet marked encrypted, and
    /// holding nothing sealed), never sealed: the mark and the sealed rows could have been removed
    /// by someone able to write the file, who planted the plain row, and sealed it would be the
    /// current dictionary, compressing every value against bytes they chose (the record lengths,
    /// visible, would then tell them about the values). The store's plain records are not read
    /// once it encrypts, so the dictionary is worth little; one is trained anew from sealed
    /// values. In a store already encrypted a plain row is left plain, and never read.
    private func pendingDictionaryChanges(
        in txn: Transaction, encryption: any RecordSealing
    ) throws -> (toSeal: [DictionaryRow], toDelete: [DictionaryRow]) {
        var rows: [DictionaryRow] = []
        var plainRows: [DictionaryRow] = []
        var holdsSealed = false
        try txn.forEach(environment.meta) { key, value in
            guard let id = DictionaryRow.id(ofKey: key), value.count > DictionaryRow.headerSize,
                let stored = try? DictionaryRow.decode(value, id: id, sealer: nil)
            else { return }
            if !stored.isSealed {
                plainRows.append(stored)  // decoded without a sealer: its bytes are the plain dictionary
                return
            }
            holdsSealed = true
            let content = UnsafeRawBufferPointer(rebasing: value[DictionaryRow.headerSize...])
            guard SealedEnvelope.keyID(of: content) != encryption.currentKeyID,
                let opened = try? DictionaryRow.decode(value, id: id, sealer: encryption), opened.bytes != nil
            else { return }
            rows.append(opened)
        }
        guard !plainRows.isEmpty, !holdsSealed, try txn.metaValue(Self.encryptedMark) == nil else {
            return (rows, [])
        }
        // The records too: the first one tells (an encrypted store's are all sealed).
        var holdsSealedRecords = false
        try txn.forEach(environment.entries) { _, stored in
            holdsSealedRecords = SealedEnvelope.isSealed(stored)
            return false
        }
        return (rows, holdsSealedRecords ? [] : plainRows)
    }

    /// Trains a dictionary on the trainer's samples and installs it if it compresses them
    /// clearly better (by 10%) than no dictionary does. Runs on the storing thread, after its
    /// store has committed; failures are logged, never thrown (the store succeeded).
    func trainDictionary(with trainer: DictionaryTrainer) {
        var installedRatio: Double?
        defer { trainer.finish(trainedRatio: installedRatio) }
        // Another tier on the store (another process) installed a dictionary after this tier's
        // (by creation time, as `adoptNewestDictionary(of:)` orders them, among the rows this
        // tier can read): that one becomes current, and nothing is trained. Each of several
        // processes training its own (all started on a store without one, or all seeing the same
        // drift) retired the oldest beyond `maximumDictionaries` while others still wrote with
        // it, and every record compressed with it became a miss.
        let current = dictionaries.currentID
        if let rows = try? environment.read({ txn in try txn.dictionaryRows(sealer: encryption) }),
            let newest = rows.filter({ $0.bytes != nil }).max(by: { $0.createdAt < $1.createdAt }),
            newest.id != current,
            rows.first(where: { $0.id == current }).map({ newest.createdAt > $0.createdAt }) ?? true,
            adoptNewestDictionary(of: [newest])
        {
            logger?.debug(
                "dictionary trained by another tier on the store adopted instead of training",
                metadata: ["tier": "\(name)", "dictionary": "\(newest.id)"])
            return
        }
        let (samples, mark) = trainer.samples()
        let settings = trainer.settings
        let size = min(settings.dictionarySize, capacity / 64)
        do {
            let bytes = try ZstdDictionary.train(samples: samples, capacity: size)
            let digested = try ZstdDictionary(bytes: bytes, level: codec.level)
            let (with, without) = compressionRatios(of: samples, with: digested)
            guard with > without * 1.1 else {
                logger?.debug(
                    "trained dictionary not used: it compresses its samples \(with)x, \(without)x without",
                    metadata: ["tier": "\(name)"])
                return
            }
            let row = DictionaryRow(
                id: 0, isProvided: false, samples: samples.count, createdAt: clock.now(), ratioWith: with,
                ratioWithout: without,
                bytes: bytes, isSealed: false, storedSize: 0)
            // Not if the tier removed every entry while this trained: not made of what it removed
            // (checked in the installing transaction, which `removeAll()`'s precedes or follows).
            guard try install(row, digested: digested, keepingAtMost: settings.maximumDictionaries, samplesMark: mark)
            else { return }
            installedRatio = with
            logger?.info(
                "dictionary trained",
                metadata: [
                    "tier": "\(name)", "samples": "\(samples.count)", "ratio": "\(with)", "ratioWithout": "\(without)",
                ])
        } catch {
            logger?.warning(
                "dictionary training failed; values stay compressed as before",
                metadata: ["tier": "\(name)", "error": "\(error)"])
        }
    }

    /// The ratio of `samples`' bytes to their compressed bytes with `dictionary`, and without.
    func compressionRatios(of samples: [[UInt8]], with dictionary: ZstdDictionary) -> (with: Double, without: Double) {
        var original = 0, with = 0, without = 0
        let largest = samples.map(\.count).max() ?? 0
        var scratch = [UInt8](repeating: 0, count: ZstdCodec.compressedBound(largest))
        scratch.withUnsafeMutableBytes { buffer in
            for sample in samples where !sample.isEmpty {
                sample.withUnsafeBytes { value in
                    original += value.count
                    with += codec.compress(value, into: buffer, dictionary: dictionary) ?? value.count
                    without += codec.compress(value, into: buffer) ?? value.count
                }
            }
        }
        return (Double(original) / Double(max(1, with)), Double(original) / Double(max(1, without)))
    }

    /// Stores `row` under the next free id and makes it current, retiring the oldest beyond
    /// `limit`; with `samplesMark`, only if the trainer still holds the samples it was trained on
    /// (whether it was installed).
    @discardableResult
    private func install(
        _ row: DictionaryRow, digested: ZstdDictionary, keepingAtMost limit: Int, samplesMark: Int? = nil
    ) throws -> Bool {
        var row = row
        // Counted once committed: `write` may run the closure again (a full map), and an
        // attempt that aborted evicted nothing.
        let installed = try write { txn -> (UInt16, [UInt16], Int)? in
            if let samplesMark, trainer?.stillHolds(samplesMark) == false { return nil }
            // A plain tier's dictionary, made of values stored in the clear, is not written
            // into a store encrypted since it opened (no tier would seal it).
            try ensureStillPlainIfPlain(in: txn)
            // An app's dictionary another tier stored since this one looked (tiers opening at
            // once): the same row serves both. Stored again under a new id, each copy retired
            // one of the dictionaries kept from earlier releases, whose records became misses.
            if row.isProvided,
                let same = try txn.dictionaryRows(sealer: encryption).last(where: {
                    $0.isProvided && $0.bytes == row.bytes
                })
            {
                return (same.id, [], 0)
            }
            let existing = try txn.dictionaryRows(sealer: nil)
            let used = Set(existing.map(\.id))
            let highest = existing.map(\.id).max() ?? 0
            // Ids grow, so a record can only name a dictionary made before it; after 65,535
            // the lowest free id is reused (tiers that digested the id's previous dictionary
            // find out when they write or read with it: see `DictionaryShelf`).
            row.id = highest < UInt16.max ? highest + 1 : (1...UInt16.max).first { !used.contains($0) } ?? 1
            let encoded = try row.encoded(sealer: encryption)
            var state = try txn.writeState()
            var retired: [UInt16] = []
            for old in existing.sorted(by: { $0.createdAt < $1.createdAt }).prefix(max(0, existing.count + 1 - limit)) {
                try DictionaryRow.key(old.id).withUnsafeBytes { _ = try txn.delete(environment.meta, $0) }
                state.used -= dictionaryCost(old.storedSize)
                retired.append(old.id)
            }
            state.used += dictionaryCost(encoded.count)
            let evicted = try evict(in: txn, state: &state, until: budget)
            try DictionaryRow.key(row.id).withUnsafeBytes { key in
                try encoded.withUnsafeBytes { try txn.put(environment.meta, key, $0) }
            }
            try txn.setWriteState(state)
            return (row.id, retired, evicted)
        }
        guard let (id, retired, evicted) = installed else { return false }
        counters.recordEvictions(evicted)
        for id in retired { dictionaries.forget(id) }
        dictionaries.install(digested, id: id)
        return true
    }

    /// The bytes a dictionary row of `count` bytes takes: its overflow pages.
    func dictionaryCost(_ count: Int) -> Int {
        let pageSize = environment.pageSize
        return (count + 16 + pageSize - 1) / pageSize * pageSize
    }

    /// The accounted bytes of every dictionary the store holds.
    func dictionaryBytes(in txn: Transaction) throws -> Int {
        try txn.dictionaryRows(sealer: nil).reduce(0) { $0 + dictionaryCost($1.storedSize) }
    }
}

extension DictionaryRow {
    var info: LMDBDictionaryInfo {
        LMDBDictionaryInfo(
            id: id, bytes: bytes?.count ?? max(0, storedSize - Self.headerSize), createdAt: createdAt,
            isProvided: isProvided,
            isSealed: isSealed, samples: samples, ratioOnSamples: ratioWith, ratioOnSamplesWithout: ratioWithout)
    }
}
