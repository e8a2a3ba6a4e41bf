import CLMDB
import Crypto
import DiskTestSupport
import Foundation
import InMemoryLogging
import Logging
import Testing
import TierCache
import TierCacheEncryption
import TierCacheLMDB
import TierCacheTesting

/// Encryption at rest: the properties an AEAD promises (NIST SP 800-38D for GCM, RFC 8439 for
/// ChaCha20-Poly1305): without the key nothing of the plaintext is readable, and any change to a
/// sealed record, its key id or the storage key it is bound to makes it fail to open. The tier
/// turns each such failure into a counted miss.
@Suite("LMDBTier encryption at rest")
struct LMDBEncryptionTests {
    static let keyOne = SymmetricKey(data: [UInt8](repeating: 0x11, count: 32))
    static let keyTwo = SymmetricKey(data: [UInt8](repeating: 0x22, count: 32))
    static let hashingSecret = SymmetricKey(data: [UInt8](repeating: 0x33, count: 32))

    static func encryption(
        _ key: SymmetricKey = keyOne, id: UInt32 = 1, previous: [EncryptionAtRest.Key] = [],
        algorithm: EncryptionAtRest.Algorithm = .aesGCM, hashedNames: Bool = false
    ) throws -> EncryptionAtRest {
        try EncryptionAtRest(
            currentKey: .init(id: id, key: key, algorithm: algorithm), previousKeys: previous,
            keyNames: hashedNames ? .hashed(with: hashingSecret) : .plain)
    }

    static func configuration(
        _ encryption: (any RecordSealing)?, dictionary: LMDBTier.DictionaryCompression = .off
    ) -> LMDBTier.Configuration {
        .init(capacity: 16 << 20, dictionary: dictionary, encryption: encryption, durability: .none)
    }

    /// The raw bytes of `data.mdb`.
    static func dataFile(_ directory: URL) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent("data.mdb"))
    }

    static let secretValue = Array("{\"account\":\"DE44500105175407324931\",\"name\":\"Ada Lovelace\"}".utf8)

    @Test(
        "Sealed records read back, and neither values nor (with hashed names) keys appear in the file",
        arguments: [
            EncryptionAtRest.Algorithm.aesGCM, .chaChaPoly,
        ])
    func roundTripHidesContent(_ algorithm: EncryptionAtRest.Algorithm) throws {
        let directory = TemporaryDirectory()
        let secretKey = "https://bank.example/accounts/ada"
        do {
            let tier = try LMDBTier(
                directory: directory.url,
                configuration: Self.configuration(try Self.encryption(algorithm: algorithm, hashedNames: true)))
            #expect(
                try tier.store(
                    entry(Self.secretValue, expiresAt: Date(timeIntervalSince1970: 4_000_000_000)),
                    forKey: key(secretKey)) == .stored)
            let found = try #require(try tier.entry(forKey: key(secretKey)))
            #expect(found.value == Self.secretValue)
            #expect(found.metadata.expiresAt == Date(timeIntervalSince1970: 4_000_000_000))
            #expect(try tier.verify().isSound)
        }
        let file = try Self.dataFile(directory.url)
        #expect(file.range(of: Data("DE44500105175407324931".utf8)) == nil)
        #expect(file.range(of: Data("bank.example".utf8)) == nil)
        // Without the key, inspection counts the sealed record and reads nothing of it.
        let report = try LMDBTier.inspect(directory: directory.url)
        #expect(report.sealedRecordsByKey == ["1": 1] && report.unopenedRecords == 1 && report.largest.isEmpty)
        #expect(try LMDBTier.verify(directory: directory.url).isSound)
        // With it, the full key (kept inside the sealed record) is listed.
        let opened = try LMDBTier.inspect(
            directory: directory.url, encryption: try Self.encryption(algorithm: algorithm, hashedNames: true))
        #expect(opened.unopenedRecords == 0 && opened.largest.map(\.key) == [secretKey])
        let reopened = try LMDBTier(
            directory: directory.url,
            configuration: Self.configuration(try Self.encryption(algorithm: algorithm, hashedNames: true)))
        #expect(try reopened.entry(forKey: key(secretKey))?.value == Self.secretValue)
    }

    @Test(
        "A wrong key is a counted miss and the record is deleted; a key id the tier was not given is a miss, the record kept"
    )
    func wrongKey() throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try LMDBTier(directory: directory.url, configuration: Self.configuration(try Self.encryption()))
            for index in 0..<5 { _ = try tier.store(entry(Self.secretValue), forKey: key("k\(index)")) }
        }
        // The same id with other key material: authentication fails.
        do {
            let tier = try LMDBTier(
                directory: directory.url, configuration: Self.configuration(try Self.encryption(Self.keyTwo)))
            #expect(try tier.entry(forKey: key("k0")) == nil)
            #expect(try tier.entry(forKey: key("k1")) == nil)
            let statistics = tier.statistics()
            #expect(statistics.unopenableRecords == 2 && statistics.corruptionsRemoved == 0 && statistics.misses == 2)
            #expect(try tier.usage().entries == 3)
        }
        // Another id altogether: the key is unknown, perhaps another process's (a rotation under
        // way). A miss, and the record stays for the processes that hold the key.
        do {
            let tier = try LMDBTier(
                directory: directory.url, configuration: Self.configuration(try Self.encryption(Self.keyTwo, id: 9)))
            #expect(try tier.entry(forKey: key("k2")) == nil)
            #expect(tier.statistics().unopenableRecords == 0 && tier.statistics().misses == 1)
            #expect(try tier.usage().entries == 3)
            #expect(try tier.verify().damagedRecords == 3, "the verifier, given these keys, cannot open them")
        }
        let tier = try LMDBTier(directory: directory.url, configuration: Self.configuration(try Self.encryption()))
        #expect(try tier.entry(forKey: key("k2"))?.value == Self.secretValue)
    }

    @Test("A sealed record altered anywhere, relabelled, or moved under another key fails to open: a counted miss")
    func tampering() throws {
        let directory = TemporaryDirectory()
        let encryption = try Self.encryption()
        do {
            let tier = try LMDBTier(directory: directory.url, configuration: Self.configuration(encryption))
            for index in 0..<4 {
                _ = try tier.store(entry(Self.secretValue + [UInt8(index)]), forKey: key("k\(index)"))
            }
        }
        try rawLMDBEdit(directory.url) { txn, dbi in
            // k0: one ciphertext bit flipped. k1: its key id byte changed. k2: k3's record copied over it.
            if var record = rawGet(txn, dbi, key: Array("k0".utf8)) {
                record[record.count / 2] ^= 0x01
                rawPut(txn, dbi, key: Array("k0".utf8), value: record)
            }
            if var record = rawGet(txn, dbi, key: Array("k1".utf8)) {
                record[4] = 2
                rawPut(txn, dbi, key: Array("k1".utf8), value: record)
            }
            if let record = rawGet(txn, dbi, key: Array("k3".utf8)) {
                rawPut(txn, dbi, key: Array("k2".utf8), value: record)
            }
        }
        let tier = try LMDBTier(
            directory: directory.url,
            configuration: Self.configuration(try Self.encryption(previous: [.init(id: 2, key: Self.keyOne)])))
        for name in ["k0", "k1", "k2"] { #expect(try tier.entry(forKey: key(name)) == nil, "\(name)") }
        #expect(try tier.entry(forKey: key("k3"))?.value == Self.secretValue + [3])
        #expect(tier.statistics().unopenableRecords == 3)
    }

    @Test("Plain records in an encrypted store, and sealed ones in a plain store, are not served")
    func mixedStores() throws {
        let directory = TemporaryDirectory()
        do {
            let plain = try LMDBTier(directory: directory.url, configuration: Self.configuration(nil))
            _ = try plain.store(entry(Self.secretValue), forKey: key("planted"))
        }
        do {
            let sealed = try LMDBTier(
                directory: directory.url, configuration: Self.configuration(try Self.encryption()))
            #expect(
                try sealed.entry(forKey: key("planted")) == nil,
                "a plain record could have been planted by anyone able to write the file")
            #expect(sealed.statistics().unopenableRecords == 1)
            _ = try sealed.store(entry(Self.secretValue), forKey: key("sealed"))
        }
        // Once opened with encryption, the store does not open without it (it would store in the clear).
        #expect {
            try LMDBTier(directory: directory.url, configuration: Self.configuration(nil))
        } throws: { ($0 as? TierCacheError)?.code == .invalidConfiguration }
        #expect(try LMDBTier.inspect(directory: directory.url).sealedRecordsByKey == ["1": 1], "inspected without keys")
        // A sealed record in a plain store (the mark removed, as anyone able to write the file can).
        try rawLMDBEdit(
            directory.url,
            { txn, dbi in
                var name = Array("encrypted".utf8)
                name.withUnsafeMutableBytes { bytes in
                    var key = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
                    _ = mdb_del(txn, dbi, &key, nil)
                }
            }, database: "tiercache.meta")
        let plain = try LMDBTier(directory: directory.url, configuration: Self.configuration(nil))
        #expect(try plain.entry(forKey: key("sealed")) == nil)
        #expect(plain.statistics().unopenableRecords == 1)
    }

    @Test("A plain tier still open when its store is opened with encryption stores nothing more in the clear")
    func plainTierOpenWhenTheStoreIsEncrypted() throws {
        let directory = TemporaryDirectory()
        let plain = try LMDBTier(directory: directory.url, configuration: Self.configuration(nil))
        #expect(try plain.store(entry([1]), forKey: key("before")) == .stored)
        let sealed = try LMDBTier(directory: directory.url, configuration: Self.configuration(try Self.encryption()))
        #expect {
            try plain.store(entry(Self.secretValue), forKey: key("after"))
        } throws: { ($0 as? TierCacheError)?.code == .invalidConfiguration }
        #expect(try Self.dataFile(directory.url).range(of: Data("DE44500105175407324931".utf8)) == nil)
        #expect(try sealed.store(entry([2]), forKey: key("after")) == .stored)
        // The plain tier cannot read what the encrypted one writes, and leaves it in place.
        #expect(try plain.entry(forKey: key("after")) == nil)
        #expect(try sealed.entry(forKey: key("after"))?.value == [2])
    }

    @Test("Rotation: records sealed under the previous key are read and sealed again under the current one")
    func keyRotation() throws {
        let directory = TemporaryDirectory()
        do {
            let tier = try LMDBTier(directory: directory.url, configuration: Self.configuration(try Self.encryption()))
            for index in 0..<3 { _ = try tier.store(entry(Self.secretValue), forKey: key("k\(index)")) }
        }
        let rotated = try Self.encryption(Self.keyTwo, id: 2, previous: [.init(id: 1, key: Self.keyOne)])
        do {
            let tier = try LMDBTier(directory: directory.url, configuration: Self.configuration(rotated))
            #expect(try tier.entry(forKey: key("k0"))?.value == Self.secretValue)
            #expect(try tier.entry(forKey: key("k1"))?.value == Self.secretValue)
            #expect(tier.statistics().recordsResealed == 2)
            #expect(try tier.entry(forKey: key("k0"))?.value == Self.secretValue)
            #expect(tier.statistics().recordsResealed == 2, "read again: already under the current key")
        }
        #expect(try LMDBTier.inspect(directory: directory.url).sealedRecordsByKey == ["1": 1, "2": 2])
        // The old key dropped: the resealed records read; the one never read is lost (a miss, its
        // record left to eviction: its key id is unknown, not its seal broken).
        let tier = try LMDBTier(
            directory: directory.url, configuration: Self.configuration(try Self.encryption(Self.keyTwo, id: 2)))
        #expect(try tier.entry(forKey: key("k0"))?.value == Self.secretValue)
        #expect(try tier.entry(forKey: key("k1"))?.value == Self.secretValue)
        #expect(try tier.entry(forKey: key("k2")) == nil)
        #expect(tier.statistics().unopenableRecords == 0 && tier.statistics().misses == 1)
    }

    @Test(
        "With encryption, dictionaries are sealed too (they hold fragments of values), and rotation reseals them at open"
    )
    func sealedDictionaries() throws {
        let directory = TemporaryDirectory()
        let values = LMDBDictionaryTests.responses(300)
        let dictionary = LMDBTier.DictionaryCompression.automatic(LMDBDictionaryTests.training)
        do {
            let tier = try LMDBTier(
                directory: directory.url,
                configuration: Self.configuration(try Self.encryption(), dictionary: dictionary))
            for (index, value) in values.enumerated() { _ = try tier.store(entry(value), forKey: key("r\(index)")) }
            let stored = try tier.storedDictionaries()
            #expect(stored.count == 1 && stored[0].isSealed)
        }
        // The trained dictionary holds the responses' common strings; none is readable in the file.
        #expect(try Self.dataFile(directory.url).range(of: Data("@example.com".utf8)) == nil)
        let rotated = try Self.encryption(Self.keyTwo, id: 2, previous: [.init(id: 1, key: Self.keyOne)])
        do {
            let tier = try LMDBTier(
                directory: directory.url, configuration: Self.configuration(rotated, dictionary: dictionary))
            for (index, value) in values.enumerated() {
                #expect(try tier.entry(forKey: key("r\(index)"))?.value == value)
            }
        }
        // Every record was resealed on read and the dictionary at open: the old key is no longer needed.
        let tier = try LMDBTier(
            directory: directory.url, configuration: Self.configuration(try Self.encryption(Self.keyTwo, id: 2)))
        for (index, value) in values.enumerated() { #expect(try tier.entry(forKey: key("r\(index)"))?.value == value) }
        #expect(tier.statistics().dictionaryMisses == 0 && tier.statistics().unopenableRecords == 0)
        // Without any key the store does not open, and inspected it lists the dictionary sealed.
        #expect(throws: TierCacheError.self) {
            try LMDBTier(directory: directory.url, configuration: Self.configuration(nil))
        }
        #expect(try LMDBTier.inspect(directory: directory.url).dictionaries.map(\.isSealed) == [true])
    }

    @Test("With hashed key names, logs name a key by its stored name, never the key itself")
    func logsKeepHashedKeysHidden() throws {
        let directory = TemporaryDirectory()
        let secretKey = "https://bank.example/accounts/ada"
        do {
            let tier = try LMDBTier(
                directory: directory.url, configuration: Self.configuration(try Self.encryption(hashedNames: true)))
            _ = try tier.store(entry(Self.secretValue), forKey: key(secretKey))
        }
        let logs = InMemoryLogHandler()
        var logger = Logger(label: "test", factory: { _ in logs })
        logger.logLevel = .debug
        var configuration = Self.configuration(try Self.encryption(Self.keyTwo, id: 2, hashedNames: true))
        configuration.logger = logger
        let tier = try LMDBTier(directory: directory.url, configuration: configuration)
        #expect(try tier.entry(forKey: key(secretKey)) == nil, "sealed under a key id not given: a miss")
        // Refused by the 5% rule (incompressible, over 5% of 16 MiB).
        #expect(try tier.store(entry(incompressible(900_000)), forKey: key(secretKey)) != .stored)
        let names = logs.entries.compactMap { $0.metadata["key"].map { "\($0)" } }
        #expect(names.count == 2, "\(logs.entries)")
        #expect(names.allSatisfy { $0.count == 17 && $0.hasPrefix("#") }, "\(names)")
        #expect(Set(names).count == 1, "one key, one name")
        #expect(!logs.entries.contains { "\($0)".contains("bank.example") })
    }

    @Test("Keys of the wrong size, duplicate ids and a short hashing secret are refused")
    func invalidKeys() throws {
        let short = SymmetricKey(data: [UInt8](repeating: 1, count: 10))
        for make in [
            { try EncryptionAtRest(currentKey: .init(id: 1, key: short)) },
            {
                try EncryptionAtRest(
                    currentKey: .init(id: 1, key: SymmetricKey(size: .bits128), algorithm: .chaChaPoly))
            },
            {
                try EncryptionAtRest(
                    currentKey: .init(id: 1, key: Self.keyOne), previousKeys: [.init(id: 1, key: Self.keyTwo)])
            },
            { try EncryptionAtRest(currentKey: .init(id: 1, key: Self.keyOne), keyNames: .hashed(with: short)) },
        ] as [() throws -> EncryptionAtRest] {
            let error = #expect(throws: TierCacheError.self) { _ = try make() }
            #expect(error?.code == .invalidConfiguration)
        }
        #expect(throws: Never.self) {
            _ = try EncryptionAtRest(currentKey: .init(id: 1, key: SymmetricKey(size: .bits128)))
        }
    }
}
