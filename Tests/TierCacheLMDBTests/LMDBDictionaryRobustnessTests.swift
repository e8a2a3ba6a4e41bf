import CLMDB
import DiskTestSupport
import Foundation
import Testing
import TierCache
import TierCacheCompression
import TierCacheRecords
import TierCacheTesting

@testable import TierCacheLMDB

/// Dictionaries under the conditions a shared, long-lived store meets: a dictionary retired by
/// another store between compressing a value and writing it, a store that switches from the app's
/// dictionary to automatic training, a stored dictionary zstd cannot digest, and a store that
/// turns encryption on after dictionaries were stored in the clear. Each expectation follows from
/// the record format's rule that a record may only name a dictionary the store holds (a record
/// naming one that is gone can never be read again).
@Suite("LMDBTier dictionaries: retirement, switching settings, damage")
struct LMDBDictionaryRobustnessTests {
    typealias Fixtures = LMDBDictionaryTests

    /// Writes a plain dictionary row of `bytes` under `id`, as another store sharing `tier`'s
    /// files would (the tier's own shelf is not told).
    static func putDictionaryRow(_ bytes: [UInt8], id: UInt16, in tier: LMDBTier) throws {
        let row = DictionaryRow(
            id: id, isProvided: false, samples: 300, createdAt: Date(), ratioWith: 3, ratioWithout: 1.5,
            bytes: bytes, isSealed: false, storedSize: 0)
        let encoded = try row.encoded(sealer: nil)
        try tier.write { txn in
            try DictionaryRow.key(id).withUnsafeBytes { key in
                try encoded.withUnsafeBytes { try txn.put(tier.environment.meta, key, $0) }
            }
        }
    }

    @Test("A value compressed with a dictionary retired before its write is compressed again, never stored unreadable")
    func retiredBetweenCompressingAndWriting() throws {
        let directory = TemporaryDirectory()
        let values = Fixtures.responses(300)
        let id = try Fixtures.populatedStore(directory.url, values.prefix(250))
        do {
            let tier = try LMDBTier(directory: directory.url, configuration: Fixtures.automatic)
            // Another process sharing the store retires the dictionary: its row goes, while this
            // tier still has it as the one to compress with.
            try tier.write { txn in
                _ = try DictionaryRow.key(id).withUnsafeBytes { try txn.delete(tier.environment.meta, $0) }
            }
            for (index, value) in values.enumerated().dropFirst(250) {
                #expect(try tier.store(entry(value), forKey: key("r\(index)")) == .stored)
            }
        }
        // Reopened (as another process, or this one after a restart, would), every value stored
        // after the retirement reads back: none names the dictionary that is gone.
        let reopened = try LMDBTier(directory: directory.url, configuration: .init(capacity: 64 << 20))
        for (index, value) in values.enumerated().dropFirst(250) {
            #expect(try reopened.entry(forKey: key("r\(index)"))?.value == value)
        }
        #expect(reopened.statistics().dictionaryMisses == 0)
    }

    @Test("After another tier's removeAll, a tier that compressed with a removed dictionary trains a new one")
    func anotherTiersRemoveAllLeavesThisTierTraining() throws {
        let directory = TemporaryDirectory()
        let values = Fixtures.responses(700)
        _ = try Fixtures.populatedStore(directory.url, values.prefix(200))
        let other = try LMDBTier(directory: directory.url, configuration: Fixtures.automatic)
        let tier = try LMDBTier(directory: directory.url, configuration: Fixtures.automatic)
        #expect(tier.dictionaries.currentID != nil)
        try other.removeAll()
        // Its next store finds the dictionary gone, and there is none to adopt: it used to go on
        // without one for good (its trained ratio set, training never came due again).
        for index in 200..<700 {
            _ = try tier.store(entry(values[index]), forKey: key("r\(index)"))
        }
        let trained = try #require(tier.dictionaries.currentID, "a dictionary trained anew")
        let stored = try tier.storedDictionaries()
        #expect(stored.map(\.id) == [trained])
        // Trained on values stored after the removal only: its samples were forgotten.
        #expect(stored.allSatisfy { $0.samples <= 500 })
        #expect(try tier.entry(forKey: key("r699"))?.value == values[699])
    }

    @Test(
        "A tier that read a record compressed with a new dictionary under its old one's id compresses with the new one")
    func aReaderMeetingAReusedIdAdoptsTheNewDictionary() throws {
        let directory = TemporaryDirectory()
        let values = Fixtures.responses(600)
        let old = try Fixtures.populatedStore(directory.url, values.prefix(200))
        let other = try LMDBTier(directory: directory.url, configuration: Fixtures.automatic)
        let tier = try LMDBTier(directory: directory.url, configuration: Fixtures.automatic)
        #expect(tier.dictionaries.currentID == old)
        // The other tier removes everything and trains again: the new dictionary takes the id.
        try other.removeAll()
        for index in 200..<600 {
            _ = try other.store(entry(values[index]), forKey: key("r\(index)"))
        }
        let new = try #require(other.dictionaries.currentID)
        try #require(new == old, "the id is reused")
        // Reading a record compressed with the new one digests it afresh; the next store
        // compresses with it (it went on without any).
        #expect(try tier.entry(forKey: key("r599"))?.value == values[599])
        #expect(try tier.store(entry(values[0]), forKey: key("again")) == .stored)
        let current = try #require(tier.dictionaries.current(forValueOf: 1024))
        #expect(
            current.id == new
                && current.dictionary.checksum == other.dictionaries.current(forValueOf: 1024)?.dictionary.checksum)
    }

    @Test("A tier with the app's dictionary stores it again after another tier retired it")
    func aProvidedDictionaryRetiredIsStoredAgain() throws {
        let directory = TemporaryDirectory()
        let trained = try ZstdDictionary.train(samples: Fixtures.responses(400, seed: 5), capacity: 8 << 10)
        let tier = try LMDBTier(
            directory: directory.url,
            configuration: .init(capacity: 64 << 20, dictionary: .provided(trained), durability: .none))
        let id = try #require(tier.dictionaries.currentID)
        try tier.write { txn in
            _ = try DictionaryRow.key(id).withUnsafeBytes { try txn.delete(tier.environment.meta, $0) }
        }
        let value = Fixtures.responses(1, seed: 9)[0]
        #expect(try tier.store(entry(value), forKey: key("p")) == .stored)
        #expect(tier.dictionaries.currentID != nil, "the app's dictionary is current again")
        #expect(try tier.storedDictionaries().map(\.isProvided) == [true])
        #expect(try tier.entry(forKey: key("p"))?.value == value)
    }

    @Test("A dictionary retired by a newer one another tier trained: this tier compresses with the newer one")
    func retiredByANewerDictionary() throws {
        let directory = TemporaryDirectory()
        let values = Fixtures.responses(300)
        let old = try Fixtures.populatedStore(directory.url, values.prefix(250))
        let tier = try LMDBTier(directory: directory.url, configuration: Fixtures.automatic)
        #expect(tier.dictionaries.current(forValueOf: 1024)?.id == old)
        // Another tier on the store trains a dictionary and retires the old one.
        let bytes = try #require(try tier.environment.read { try $0.dictionaryRow(old, sealer: nil)?.bytes })
        try Self.putDictionaryRow(bytes, id: old + 1, in: tier)
        try tier.write { txn in
            _ = try DictionaryRow.key(old).withUnsafeBytes { try txn.delete(tier.environment.meta, $0) }
        }
        #expect(try tier.store(entry(values[250]), forKey: key("r250")) == .stored)
        #expect(tier.dictionaries.current(forValueOf: 1024)?.id == old + 1, "the newer dictionary took over")
        #expect(try tier.entry(forKey: key("r250"))?.value == values[250])
    }

    @Test("A value compressed with a dictionary whose id was given to another dictionary meanwhile is compressed again")
    func idReusedBetweenCompressingAndWriting() throws {
        let directory = TemporaryDirectory()
        let values = Fixtures.responses(300)
        let id = try Fixtures.populatedStore(directory.url, values.prefix(250))
        do {
            let tier = try LMDBTier(directory: directory.url, configuration: Fixtures.automatic)
            // Another store put a different dictionary under the same id (ids are reused after
            // 65,535, and start again in a store made anew).
            let other = try ZstdDictionary.train(samples: Fixtures.otherResponses(300), capacity: 8 << 10)
            try Self.putDictionaryRow(other, id: id, in: tier)
            for (index, value) in values.enumerated().dropFirst(250) {
                #expect(try tier.store(entry(value), forKey: key("r\(index)")) == .stored)
            }
        }
        let reopened = try LMDBTier(directory: directory.url, configuration: .init(capacity: 64 << 20))
        for (index, value) in values.enumerated().dropFirst(250) {
            #expect(try reopened.entry(forKey: key("r\(index)"))?.value == value)
        }
        #expect(reopened.statistics().dictionaryMisses == 0 && reopened.statistics().corruptionsRemoved == 0)
    }

    @Test("A reader that digested a dictionary before its id was given to another reads records made with the new one")
    func readerWithAStaleDictionary() throws {
        let directory = TemporaryDirectory()
        let values = Fixtures.responses(300)
        let id = try Fixtures.populatedStore(directory.url, values.prefix(250))
        let tier = try LMDBTier(directory: directory.url, configuration: .init(capacity: 64 << 20))
        // This tier digests dictionary `id` by reading the records that need it.
        #expect((try LMDBTier.inspect(directory: directory.url).recordsByDictionary[String(id)] ?? 0) > 0)
        for (index, value) in values.prefix(250).enumerated() {
            #expect(try tier.entry(forKey: key("r\(index)"))?.value == value)
        }
        // Another store gives the id to another dictionary and stores a record made with it.
        let otherValues = Fixtures.otherResponses(300)
        let other = try ZstdDictionary(
            bytes: try ZstdDictionary.train(samples: otherValues, capacity: 8 << 10), level: 1)
        try Self.putDictionaryRow(other.bytes, id: id, in: tier)
        let record = StoredRecord.encode(
            entry(otherValues[0]), fullKey: nil, codec: try #require(ZstdCodec(level: 1)),
            dictionary: EntryRecord.Dictionary(id: id, dictionary: other))
        #expect(record.withUnsafeBytes { (try? StoredRecord.header(of: $0))?.dictionaryID } == id)
        try tier.write { txn in
            try Array("fresh".utf8).withUnsafeBytes { key in
                try record.withUnsafeBytes { try txn.put(tier.environment.entries, key, $0) }
            }
        }
        #expect(try tier.entry(forKey: key("fresh"))?.value == otherValues[0])
        #expect(tier.statistics().corruptionsRemoved == 0)
    }

    @Test("A store that held the app's dictionary and is reopened with automatic dictionaries trains its own")
    func fromProvidedToAutomatic() throws {
        let directory = TemporaryDirectory()
        // The app's dictionary was trained on responses of another API: it still digests, but
        // says nothing about its ratio (an app's dictionary never does).
        let provided = try ZstdDictionary.train(samples: Fixtures.otherResponses(300), capacity: 8 << 10)
        let values = Fixtures.responses(400)
        do {
            let tier = try LMDBTier(
                directory: directory.url,
                configuration: .init(
                    capacity: 64 << 20, dictionary: .provided(provided), durability: .none))
            for (index, value) in values.prefix(50).enumerated() {
                _ = try tier.store(entry(value), forKey: key("r\(index)"))
            }
        }
        let tier = try LMDBTier(directory: directory.url, configuration: Fixtures.automatic)
        // Well over a 128 KiB ring of fresh 1 KiB samples.
        for (index, value) in values.enumerated().dropFirst(50) {
            _ = try tier.store(entry(value), forKey: key("r\(index)"))
        }
        let stored = try tier.storedDictionaries()
        #expect(stored.count == 2, "the app's dictionary and one trained here: \(stored)")
        #expect(stored.last.map { !$0.isProvided && $0.ratioOnSamples != nil } == true)
        for (index, value) in values.enumerated() {
            #expect(try tier.entry(forKey: key("r\(index)"))?.value == value)
        }
    }

    @Test(
        "A stored dictionary zstd cannot digest is skipped at open: the store opens, and its records are dictionary misses"
    )
    func undigestableDictionaryAtOpen() throws {
        let directory = TemporaryDirectory()
        let values = Fixtures.responses(300)
        let id = try Fixtures.populatedStore(directory.url, values)
        do {
            // Replace the dictionary with bytes that pass the row's checksum but are not a
            // dictionary zstd can load: its magic number, then a header that is nonsense.
            let tier = try LMDBTier(directory: directory.url, configuration: .init(capacity: 64 << 20))
            let broken = [0x37, 0xA4, 0x30, 0xEC] + [UInt8](repeating: 0xFF, count: 4096)
            #expect(throws: (any Error).self) { try ZstdDictionary(bytes: broken, level: 1) }
            try Self.putDictionaryRow(broken, id: id, in: tier)
        }
        let reopened = try LMDBTier(directory: directory.url, configuration: Fixtures.automatic)
        var hits = 0
        for (index, value) in values.enumerated() {
            if let found = try reopened.entry(forKey: key("r\(index)")) {
                #expect(found.value == value)
                hits += 1
            }
        }
        #expect(reopened.statistics().dictionaryMisses == values.count - hits)
        #expect(hits < values.count, "records that named the dictionary cannot be read")
        // New values are stored without it, and read back.
        let fresh = Fixtures.responses(20, seed: 99)
        for (index, value) in fresh.enumerated() {
            #expect(try reopened.store(entry(value), forKey: key("fresh\(index)")) == .stored)
            #expect(try reopened.entry(forKey: key("fresh\(index)"))?.value == value)
        }
    }

    /// A row that failed to decode was invisible: `removeAll()` said it emptied the store and
    /// left the row, fragments of values, on disk.
    @Test("removeAll() deletes a dictionary row that fails to decode")
    func removeAllDeletesDamagedRows() throws {
        let directory = TemporaryDirectory()
        let tier = try LMDBTier(directory: directory.url, configuration: Fixtures.automatic)
        try Self.putDictionaryRow([UInt8](repeating: 0x41, count: 4_096), id: 7, in: tier)
        try tier.write { txn in
            try DictionaryRow.key(7).withUnsafeBytes { key in
                var row = try #require(try txn.get(tier.environment.meta, key)).map { $0 }
                row[row.count - 1] ^= 0xFF  // its checksum fails now
                try row.withUnsafeBytes { try txn.put(tier.environment.meta, key, $0) }
            }
        }
        #expect(try tier.storedDictionaries().isEmpty, "a damaged row is not read")
        try tier.removeAll()
        let left = try tier.write { txn in
            try DictionaryRow.key(7).withUnsafeBytes { try txn.get(tier.environment.meta, $0) != nil }
        }
        #expect(!left)
    }

    @Test("A plain dictionary row planted in a store already encrypted is not sealed, nor ever used")
    func plantedPlainRowIsNotSealed() throws {
        let directory = TemporaryDirectory()
        let configuration = LMDBTier.Configuration(
            capacity: 64 << 20, dictionary: .automatic(Fixtures.training), encryption: TestSealer(), durability: .none)
        do {
            let encrypted = try LMDBTier(directory: directory.url, configuration: configuration)
            for (index, value) in Fixtures.responses(20).enumerated() {
                #expect(try encrypted.store(entry(value), forKey: key("r\(index)")) == .stored)
            }
            // Written to the file as someone able to write it would, under the highest id.
            try Self.putDictionaryRow([UInt8](repeating: 0x41, count: 4_096), id: .max, in: encrypted)
        }
        let reopened = try LMDBTier(directory: directory.url, configuration: configuration)
        let planted = try #require(try reopened.storedDictionaries().first { $0.id == .max })
        #expect(!planted.isSealed)
        #expect(try reopened.entry(forKey: key("r3"))?.value == Fixtures.responses(20)[3])
    }

    @Test("A plain dictionary row planted in an encrypted store left empty is not sealed either")
    func plantedPlainRowInEmptyStore() throws {
        let directory = TemporaryDirectory()
        let configuration = LMDBTier.Configuration(
            capacity: 64 << 20, dictionary: .automatic(Fixtures.training), encryption: TestSealer(), durability: .none)
        do {
            let encrypted = try LMDBTier(directory: directory.url, configuration: configuration)
            try Self.putDictionaryRow([UInt8](repeating: 0x41, count: 4_096), id: .max, in: encrypted)
        }
        let reopened = try LMDBTier(directory: directory.url, configuration: configuration)
        let planted = try #require(try reopened.storedDictionaries().first { $0.id == .max })
        #expect(!planted.isSealed)
    }

    /// Sealed, a plain row became the encrypted store's current dictionary: someone able to
    /// write the file who removed its encrypted mark and sealed rows, and planted a plain one,
    /// had every value compressed against bytes they chose (and read the lengths).
    @Test("Turning encryption on deletes the dictionaries stored in the clear; sealed records read back")
    func encryptionDeletesPlainDictionaries() throws {
        let directory = TemporaryDirectory()
        let values = Fixtures.responses(300)
        let id = try Fixtures.populatedStore(directory.url, values.prefix(250))
        #expect(
            try LMDBTier(directory: directory.url, configuration: .init(capacity: 64 << 20)).storedDictionaries().map(
                \.isSealed) == [false])
        let configuration = LMDBTier.Configuration(
            capacity: 64 << 20, dictionary: .automatic(Fixtures.training), encryption: TestSealer(), durability: .none)
        do {
            let encrypted = try LMDBTier(directory: directory.url, configuration: configuration)
            #expect(try encrypted.storedDictionaries().allSatisfy(\.isSealed), "the plain row is gone")
            for (index, value) in values.enumerated().dropFirst(250) {
                #expect(try encrypted.store(entry(value), forKey: key("r\(index)")) == .stored)
                #expect(try encrypted.entry(forKey: key("r\(index)"))?.value == value)
            }
        }
        // Not on disk either.
        var stored: [UInt8]?
        try rawLMDBEdit(
            directory.url,
            { txn, dbi in
                stored = rawGet(txn, dbi, key: DictionaryRow.key(id)).flatMap { row in
                    (try? row.withUnsafeBytes { try DictionaryRow.decode($0, id: id, sealer: nil) })?.isSealed == false
                        ? row : nil
                }
            },
            database: "tiercache.meta")
        #expect(stored == nil)
        // Reopened with the key, the sealed records read back; the plain ones, never served by
        // an encrypted store, are all verification finds.
        let again = try LMDBTier(directory: directory.url, configuration: configuration)
        for (index, value) in values.enumerated().dropFirst(250) {
            #expect(try again.entry(forKey: key("r\(index)"))?.value == value)
        }
        let verification = try again.verify()
        #expect(verification.structuralDamage == nil && verification.damagedRecords == 250, "\(verification)")
    }

    @Test(
        "A dictionary read with an encryption key but stored in the clear has no bytes: an encrypted store never uses a plain one"
    )
    func plainRowsAreRefusedWithASealer() throws {
        let row = DictionaryRow(
            id: 3, isProvided: true, samples: 0, createdAt: Date(), ratioWith: nil, ratioWithout: nil,
            bytes: [UInt8](repeating: 7, count: 512), isSealed: false, storedSize: 0)
        let encoded = try row.encoded(sealer: nil)
        let sealer = TestSealer()
        let plain = try encoded.withUnsafeBytes { try DictionaryRow.decode($0, id: 3, sealer: nil) }
        let withSealer = try encoded.withUnsafeBytes { try DictionaryRow.decode($0, id: 3, sealer: sealer) }
        #expect(plain.bytes == row.bytes)
        #expect(withSealer.bytes == nil && !withSealer.isSealed)
        // A sealed row opens with the sealer, and is unreadable without it.
        let sealed = try row.encoded(sealer: sealer)
        #expect(try sealed.withUnsafeBytes { try DictionaryRow.decode($0, id: 3, sealer: sealer) }.bytes == row.bytes)
        #expect(try sealed.withUnsafeBytes { try DictionaryRow.decode($0, id: 3, sealer: nil) }.bytes == nil)
        // Bound to its id: the same sealed row under another id does not open.
        #expect(try sealed.withUnsafeBytes { try DictionaryRow.decode($0, id: 4, sealer: sealer) }.bytes == nil)
    }
}

/// A sealer for tests that need one without swift-crypto: XOR with a key byte and a
/// 4-byte tag of the context's and content's checksum. Not encryption, but it has the
/// properties the record format relies on (a key id, and failing to open when the context or
/// the content differ).
struct TestSealer: RecordSealing {
    var currentKeyID: UInt32 { 1 }

    func seal(
        _ plaintext: UnsafeRawBufferPointer, keyID: UInt32, authenticating: UnsafeRawBufferPointer
    ) throws -> [UInt8] {
        let body = plaintext.map { $0 ^ 0x5A }
        return body + tag(body, authenticating)
    }

    func open(_ box: UnsafeRawBufferPointer, keyID: UInt32, authenticating: UnsafeRawBufferPointer) throws -> [UInt8] {
        guard keyID == 1, box.count >= 4 else { throw RecordSealingError.unknownKey(keyID) }
        let body = [UInt8](box.prefix(box.count - 4))
        guard [UInt8](box.suffix(4)) == tag(body, authenticating) else { throw RecordSealingError.authenticationFailed }
        return body.map { $0 ^ 0x5A }
    }

    func storageName(forKey key: UnsafeRawBufferPointer) -> [UInt8]? { nil }

    private func tag(_ body: [UInt8], _ context: UnsafeRawBufferPointer) -> [UInt8] {
        var hash: UInt32 = 2_166_136_261
        for byte in body + [UInt8](context) { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return withUnsafeBytes(of: hash.littleEndian) { Array($0) }
    }
}
