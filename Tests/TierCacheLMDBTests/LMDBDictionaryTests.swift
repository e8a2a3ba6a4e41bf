import CLMDB
import DiskTestSupport
import Foundation
import Synchronization
import Testing
import TierCache
import TierCacheCompression
import TierCacheLMDB
import TierCacheTesting

/// Small JSON responses compressed with trained zstd dictionaries.
///
/// What the tests expect comes from zstd's documentation of dictionaries ("the smaller the
/// amount of data to compress, the more difficult it is to compress... a dictionary trained on
/// similar data gives it a history"; its own benchmark on small JSON records shows ratios
/// roughly doubling) and from the measurement with the zstd tool (1.8× alone, 3.2× with
/// a 16 KiB dictionary on 1 KiB JSON): a dictionary must at least improve the ratio by a third
/// on responses that share their structure, and must not help responses that share nothing.
@Suite("LMDBTier dictionaries")
struct LMDBDictionaryTests {
    /// Training settings small enough to train within a test (a 128 KiB sample ring).
    static let training = LMDBTier.DictionaryTraining(dictionarySize: 8 << 10, sampleBytes: 128 << 10)

    static func responses(_ count: Int, size: Int = 1024, seed: UInt64 = 7) -> [[UInt8]] {
        var generator = SampleJSONResponses(seed: seed)
        return (0..<count).map { _ in generator.next(targetSize: size) }
    }

    /// Responses that share nothing with `responses`' vocabulary: the same structure with every
    /// letter rotated by 13 (so field names, names and words differ), as if the API changed.
    static func otherResponses(_ count: Int, seed: UInt64 = 11) -> [[UInt8]] {
        responses(count, seed: seed).map { response in
            response.map { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"): (byte - UInt8(ascii: "a") + 13) % 26 + UInt8(ascii: "a")
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): (byte - UInt8(ascii: "A") + 13) % 26 + UInt8(ascii: "A")
                default: byte
                }
            }
        }
    }

    /// Stores `values` under keys `r0`, `r1`… in a tier with automatic dictionaries (closed
    /// again before returning), and returns the id of the dictionary it trained.
    static func populatedStore(_ directory: URL, _ values: some Sequence<[UInt8]>) throws -> UInt16 {
        let tier = try LMDBTier(directory: directory, configuration: automatic)
        for (index, value) in values.enumerated() { _ = try tier.store(entry(value), forKey: key("r\(index)")) }
        return try #require(try tier.storedDictionaries().first?.id)
    }

    static let automatic = LMDBTier.Configuration(
        capacity: 64 << 20, dictionary: .automatic(training), durability: .none)

    @Test(
        "Once a ring of small values has been stored, a dictionary is trained and later small values compress with it")
    func automaticTraining() throws {
        let directory = TemporaryDirectory()
        let tier = try LMDBTier(
            directory: directory.url, configuration: Self.automatic)
        let values = Self.responses(400)
        // 128 KiB of ~1 KiB responses: the ring fills after about 125 stores.
        for (index, value) in values.prefix(100).enumerated() {
            #expect(try tier.store(entry(value), forKey: key("r\(index)")) == .stored)
        }
        #expect(try tier.storedDictionaries().isEmpty, "the ring is not full yet")
        for (index, value) in values.enumerated().dropFirst(100) {
            #expect(try tier.store(entry(value), forKey: key("r\(index)")) == .stored)
        }
        let dictionaries = try tier.storedDictionaries()
        try #require(dictionaries.count == 1)
        let trained = dictionaries[0]
        #expect(trained.bytes <= 8 << 10 && trained.samples >= 100 && !trained.isProvided && !trained.isSealed)
        let onSamples = try #require(trained.ratioOnSamples),
            withoutOnSamples = try #require(trained.ratioOnSamplesWithout)
        #expect(onSamples > withoutOnSamples * 4 / 3, "\(onSamples)x with, \(withoutOnSamples)x without")

        for (index, value) in values.enumerated() {
            #expect(try tier.entry(forKey: key("r\(index)"))?.value == value)
        }
        let report = try LMDBTier.inspect(directory: directory.url)
        let used = report.recordsByDictionary[String(trained.id)] ?? 0
        #expect(used >= 200, "the records stored after training use it: \(used)")
        let with = try #require(report.dictionaryRecordsRatio),
            without = try #require(report.dictionaryRecordsRatioWithout)
        #expect(with > without * 4 / 3, "stored records: \(with)x with the dictionary, \(without)x alone")
    }

    @Test("Records keep their dictionary across reopening; the reopened tier compresses new values with it")
    func dictionarySurvivesReopening() throws {
        let directory = TemporaryDirectory()
        let values = Self.responses(300)
        let id = try Self.populatedStore(directory.url, values.prefix(250))
        let reopened = try LMDBTier(directory: directory.url, configuration: Self.automatic)
        for (index, value) in values.enumerated().dropFirst(250) {
            _ = try reopened.store(entry(value), forKey: key("r\(index)"))
        }
        for (index, value) in values.enumerated() {
            #expect(try reopened.entry(forKey: key("r\(index)"))?.value == value)
        }
        #expect(try reopened.storedDictionaries().map(\.id) == [id])
        let report = try LMDBTier.inspect(directory: directory.url)
        #expect((report.recordsByDictionary[String(id)] ?? 0) >= 150)
        // A tier opened with dictionaries off still reads every record.
        let plain = try LMDBTier(directory: directory.url, configuration: .init(capacity: 64 << 20))
        for (index, value) in values.enumerated() {
            #expect(try plain.entry(forKey: key("r\(index)"))?.value == value)
        }
    }

    @Test("A record whose dictionary is gone is a counted miss, deleted, never a crash")
    func missingDictionary() throws {
        let directory = TemporaryDirectory()
        let values = Self.responses(300)
        let id = try Self.populatedStore(directory.url, values)
        let withDictionary = try LMDBTier.inspect(directory: directory.url).recordsByDictionary[String(id)] ?? 0
        #expect(withDictionary > 0)
        // Delete the dictionary's row, as a store edited by hand (or an older version) might lack it.
        try rawLMDBEdit(
            directory.url,
            { txn, dbi in
                var name = Array("dictionary.".utf8) + [UInt8(id >> 8), UInt8(id & 0xFF)]
                name.withUnsafeMutableBytes { bytes in
                    var key = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
                    #expect(mdb_del(txn, dbi, &key, nil) == 0)
                }
            }, database: "tiercache.meta")

        let tier = try LMDBTier(directory: directory.url, configuration: .init(capacity: 64 << 20))
        var hits = 0
        for (index, value) in values.enumerated() {
            if let found = try tier.entry(forKey: key("r\(index)")) {
                #expect(found.value == value)
                hits += 1
            }
        }
        let statistics = tier.statistics()
        #expect(statistics.dictionaryMisses == withDictionary)
        #expect(statistics.corruptionsRemoved == 0)
        #expect(hits == values.count - withDictionary)
        #expect(try tier.usage().entries == values.count - withDictionary, "the unreadable records were deleted")
        #expect(try tier.verify().isSound)
    }

    @Test(
        "When values stop resembling the dictionary's samples, a new one is trained; the oldest beyond the limit is retired"
    )
    func retrainingOnDrift() throws {
        let directory = TemporaryDirectory()
        var training = Self.training
        training.maximumDictionaries = 1
        let tier = try LMDBTier(
            directory: directory.url,
            configuration: .init(capacity: 64 << 20, dictionary: .automatic(training), durability: .none))
        let first = Self.responses(300)
        for (index, value) in first.enumerated() { _ = try tier.store(entry(value), forKey: key("a\(index)")) }
        let firstID = try #require(try tier.storedDictionaries().first?.id)
        let usersBeforeDrift =
            (try? LMDBTier.inspect(directory: directory.url).recordsByDictionary[String(firstID)]) ?? 0
        // Responses sharing nothing with the samples: the ratio with the dictionary falls far
        // below what it achieved on them, so after a further ring a new dictionary replaces it.
        let second = Self.otherResponses(400)
        for (index, value) in second.enumerated() { _ = try tier.store(entry(value), forKey: key("b\(index)")) }
        let dictionaries = try tier.storedDictionaries()
        #expect(dictionaries.count == 1)
        let secondID = try #require(dictionaries.first?.id)
        #expect(secondID > firstID)
        // Records compressed with the retired dictionary are now misses, counted as such.
        let firstUsers = (try? LMDBTier.inspect(directory: directory.url).recordsByDictionary[String(firstID)]) ?? 0
        #expect(firstUsers > 0)
        // The second dictionary learnt the drifted responses: trained on a ring of them only.
        let secondUsers = (try? LMDBTier.inspect(directory: directory.url).recordsByDictionary[String(secondID)]) ?? 0
        #expect(secondUsers > 0)
        // Drift is judged a ring of values compressed with the dictionary at a time, so the
        // window that sees only drifted values ends within two rings of them; the value that
        // completes it is the last one compressed with the old dictionary.
        let drifted = firstUsers - usersBeforeDrift
        var bytes = 0
        let twoRings =
            second.prefix {
                bytes += $0.count
                return bytes <= 2 * training.sampleBytes
            }.count + 1
        #expect(
            drifted > 0 && drifted <= twoRings,
            "retrained within two rings of drifted values (\(twoRings)): \(drifted) used the old one")
        var misses = 0
        for index in first.indices where try tier.entry(forKey: key("a\(index)")) == nil { misses += 1 }
        for (index, value) in second.enumerated() {
            if let found = try tier.entry(forKey: key("b\(index)")) {
                #expect(found.value == value)
            } else {
                misses += 1
            }
        }
        #expect(misses == firstUsers)
        #expect(tier.statistics().dictionaryMisses == firstUsers)
    }

    @Test("Responses that share their structure with the samples do not trigger retraining")
    func noRetrainingWithoutDrift() throws {
        let directory = TemporaryDirectory()
        let tier = try LMDBTier(
            directory: directory.url, configuration: Self.automatic)
        for (index, value) in Self.responses(800, seed: 3).enumerated() {
            _ = try tier.store(entry(value), forKey: key("r\(index)"))
        }
        #expect(try tier.storedDictionaries().count == 1)
    }

    @Test("Values over the size limit, and empty values, are compressed without the dictionary")
    func largeValuesSkipTheDictionary() throws {
        let directory = TemporaryDirectory()
        let tier = try LMDBTier(
            directory: directory.url, configuration: Self.automatic)
        for (index, value) in Self.responses(300).enumerated() {
            _ = try tier.store(entry(value), forKey: key("r\(index)"))
        }
        let id = try #require(try tier.storedDictionaries().first?.id)
        let before = try LMDBTier.inspect(directory: directory.url).recordsByDictionary[String(id)] ?? 0
        let large = Self.responses(1, size: 32 << 10)[0]
        _ = try tier.store(entry(large), forKey: key("large"))
        _ = try tier.store(entry([]), forKey: key("empty"))
        #expect(try LMDBTier.inspect(directory: directory.url).recordsByDictionary[String(id)] ?? 0 == before)
        #expect(try tier.entry(forKey: key("large"))?.value == large)
        #expect(try tier.entry(forKey: key("empty"))?.value == [])
    }

    @Test(
        "Tiers sharing a store (processes started together) train one dictionary: the others adopt it rather than retire it"
    )
    func tiersOnOneStoreShareADictionary() throws {
        let directory = TemporaryDirectory()
        // All open before any dictionary exists, as processes started together on a new store.
        let tiers = try (0..<5).map { _ in try LMDBTier(directory: directory.url, configuration: Self.automatic) }
        let values = Self.responses(200)
        for (number, tier) in tiers.enumerated() {
            for (index, value) in values.enumerated() {
                #expect(try tier.store(entry(value), forKey: key("t\(number)-r\(index)")) == .stored)
            }
        }
        let stored = try tiers[0].storedDictionaries()
        #expect(stored.count == 1, "trained \(stored.map(\.id))")
        // What the first tier wrote with its dictionary reads back through the last.
        for (index, value) in values.enumerated() {
            #expect(try tiers[4].entry(forKey: key("t0-r\(index)"))?.value == value)
        }
        #expect(tiers.allSatisfy { $0.statistics().dictionaryMisses == 0 })
    }

    @Test("Tiers opening at once (64) with an app's dictionary store it once")
    func providedDictionaryOpenedAtOnce() throws {
        let directory = TemporaryDirectory()
        let trained = try ZstdDictionary.train(samples: Self.responses(400, seed: 5), capacity: 8 << 10)
        let configuration = LMDBTier.Configuration(
            capacity: 64 << 20, dictionary: .provided(trained), durability: .none)
        let failures = Mutex(0)
        let url = directory.url
        DispatchQueue.concurrentPerform(iterations: 64) { _ in
            if (try? LMDBTier(directory: url, configuration: configuration)) == nil {
                failures.withLock { $0 += 1 }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        let stored = try LMDBTier.inspect(directory: directory.url).dictionaries
        #expect(stored.count == 1, "\(stored.map(\.id))")
    }

    @Test(
        "removeAll removes the dictionaries trained on what it removed; the next ring trains anew; an app's own stays")
    func removeAllRemovesTrainedDictionaries() throws {
        let directory = TemporaryDirectory()
        let values = Self.responses(400)
        let tier = try LMDBTier(directory: directory.url, configuration: Self.automatic)
        for (index, value) in values.prefix(200).enumerated() {
            _ = try tier.store(entry(value), forKey: key("r\(index)"))
        }
        let trained = try #require(try tier.storedDictionaries().first)
        try tier.removeAll()
        #expect(try tier.storedDictionaries().isEmpty, "a dictionary made of the removed values outlived them")
        #expect(try tier.usage().bytes == 0 && tier.usage().entries == 0)
        // Stored after: readable, and a ring of them trains a dictionary of their own.
        for (index, value) in values.suffix(200).enumerated() {
            _ = try tier.store(entry(value), forKey: key("s\(index)"))
        }
        for (index, value) in values.suffix(200).enumerated() {
            #expect(try tier.entry(forKey: key("s\(index)"))?.value == value)
        }
        let retrained = try tier.storedDictionaries()
        #expect(retrained.count == 1 && retrained.first?.createdAt ?? .distantPast > trained.createdAt)

        let app = try ZstdDictionary.train(samples: Self.responses(400, seed: 5), capacity: 8 << 10)
        let providedDirectory = TemporaryDirectory()
        let provided = try LMDBTier(
            directory: providedDirectory.url,
            configuration: .init(capacity: 64 << 20, dictionary: .provided(app), durability: .none))
        _ = try provided.store(entry(values[0]), forKey: key("p"))
        try provided.removeAll()
        #expect(try provided.storedDictionaries().map(\.isProvided) == [true])
        #expect(try provided.store(entry(values[1]), forKey: key("q")) == .stored)
    }

    @Test("An app's dictionary is stored once, found again on reopening, and replaced by a new id when it changes")
    func providedDictionary() throws {
        let directory = TemporaryDirectory()
        let samples = Self.responses(400, seed: 5)
        // zstd's trainer on one set of responses, as an app would run `zstd --train` offline.
        let trained = try ZstdDictionary.train(samples: samples, capacity: 8 << 10)
        let values = Self.responses(50)
        let configuration = LMDBTier.Configuration(
            capacity: 64 << 20, dictionary: .provided(trained), durability: .none)
        do {
            let tier = try LMDBTier(directory: directory.url, configuration: configuration)
            for (index, value) in values.enumerated() { _ = try tier.store(entry(value), forKey: key("r\(index)")) }
        }
        let reopened = try LMDBTier(directory: directory.url, configuration: configuration)
        let stored = try reopened.storedDictionaries()
        #expect(stored.count == 1 && stored[0].isProvided && stored[0].bytes == trained.count)
        let report = try LMDBTier.inspect(directory: directory.url)
        #expect(report.recordsByDictionary[String(stored[0].id)] == values.count)
        #expect(try #require(report.dictionaryRecordsRatio) > (report.dictionaryRecordsRatioWithout ?? 0) * 4 / 3)

        // Another dictionary: a new id; the records made with the first stay readable.
        let other = try ZstdDictionary.train(samples: Self.responses(400, seed: 9), capacity: 8 << 10)
        let changed = try LMDBTier(
            directory: directory.url,
            configuration: .init(capacity: 64 << 20, dictionary: .provided(other), durability: .none))
        #expect(try changed.storedDictionaries().map(\.id) == [stored[0].id, stored[0].id + 1])
        for (index, value) in values.enumerated() {
            #expect(try changed.entry(forKey: key("r\(index)"))?.value == value)
        }

        // A new dictionary with every release: the store keeps the last four, not every one.
        for seed in UInt64(20)..<25 {
            let next = try ZstdDictionary.train(samples: Self.responses(400, seed: seed), capacity: 8 << 10)
            _ = try LMDBTier(
                directory: directory.url,
                configuration: .init(capacity: 64 << 20, dictionary: .provided(next), durability: .none))
        }
        let kept = try LMDBTier.inspect(directory: directory.url).dictionaries
        #expect(kept.count == 4, "\(kept.map(\.id))")
    }

    @Test(
        "Unusable dictionary settings are refused with a clear error",
        arguments: [
            LMDBTier.DictionaryCompression.provided([]),
            .provided([UInt8](repeating: 1, count: 1 << 20)),
            .provided([1, 2, 3], maximumValueSize: 0),
            .automatic(.init(dictionarySize: 100)),
            .automatic(.init(dictionarySize: 16 << 10, sampleBytes: 16 << 10)),
            // 8 × dictionarySize overflowed before the check could refuse it.
            .automatic(.init(dictionarySize: .max)),
            .automatic(.init(retrainBelow: 1.5)),
            .automatic(.init(maximumDictionaries: 0)),
            .automatic(.init(maximumValueSize: 0)),
        ])
    func invalidSettings(_ setting: LMDBTier.DictionaryCompression) throws {
        let directory = TemporaryDirectory()
        let error = #expect(throws: TierCacheError.self) {
            try LMDBTier(directory: directory.url, configuration: .init(capacity: 4 << 20, dictionary: setting))
        }
        #expect(error?.code == .invalidConfiguration)
    }

    @Test("A damaged record compressed with a dictionary is a counted corruption, not a crash")
    func damagedDictionaryRecord() throws {
        let directory = TemporaryDirectory()
        let values = Self.responses(300)
        _ = try Self.populatedStore(directory.url, values)
        // Flip one payload byte of the last record (stored after training, so with the dictionary).
        let victim = Array("r\(values.count - 1)".utf8)
        try rawLMDBEdit(directory.url) { txn, dbi in
            guard var record = rawGet(txn, dbi, key: victim) else { return }
            #expect(record[1] & 4 != 0, "the record names a dictionary")
            record[record.count - 10] ^= 0x5A
            rawPut(txn, dbi, key: victim, value: record)
        }
        let tier = try LMDBTier(directory: directory.url, configuration: Self.automatic)
        #expect(try tier.entry(forKey: key("r\(values.count - 1)")) == nil)
        #expect(tier.statistics().corruptionsRemoved == 1)
        #expect(try tier.entry(forKey: key("r\(values.count - 2)"))?.value == values[values.count - 2])
    }
}

extension LMDBDictionaryTests {
    @Test(
        "Small values already in the store are the first samples: a store reopened with automatic dictionaries trains on its next store"
    )
    func seededFromTheStore() throws {
        let directory = TemporaryDirectory()
        let values = Self.responses(300)
        do {
            let plain = try LMDBTier(
                directory: directory.url, configuration: .init(capacity: 64 << 20, durability: .none))
            for (index, value) in values.enumerated() { _ = try plain.store(entry(value), forKey: key("r\(index)")) }
        }
        let tier = try LMDBTier(
            directory: directory.url, configuration: Self.automatic)
        #expect(try tier.storedDictionaries().isEmpty)
        _ = try tier.store(entry(values[0]), forKey: key("next"))
        let trained = try #require(try tier.storedDictionaries().first)
        #expect(trained.samples >= 100, "trained on the stored values: \(trained.samples) samples")
        for (index, value) in values.enumerated() { #expect(try tier.entry(forKey: key("r\(index)"))?.value == value) }
    }
}
