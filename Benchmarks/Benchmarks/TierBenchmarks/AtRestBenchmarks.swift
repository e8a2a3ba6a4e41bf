import Benchmark
import Crypto
import Foundation
import TierCache
import TierCacheEncryption
import TierCacheLMDB
import Workloads

// What lies on disk (issue 17): get and set of JSON responses of 256 B, 1 KiB and 4 KiB in
// LMDBTier with no dictionary (the baseline), with a dictionary the tier trained itself, and
// with encryption at rest (AES-GCM). Each store first trains on other responses of the same API
// (removed again), so the responses measured were never among the dictionary's samples. Stores
// use `Durability.none`, so the codec's cost is not hidden behind fsync. AtRestRatios (beside
// these) reports the compression ratios and the same ratios measured in interleaved rounds.

func atRestBenchmarks() {
    let entries = 2_000
    let aesKey = SymmetricKey(data: [UInt8](repeating: 0x5A, count: 32))
    for size in [256, 1_024, 4_096] {
        let workload = AtRestWorkload(size: size, entries: entries)
        let (trainingValues, values, keys) = (workload.trainingValues, workload.values, workload.keys)
        let variants: [(name: String, dictionary: LMDBTier.DictionaryCompression, encryption: EncryptionAtRest?)] = [
            ("baseline no dictionary", .off, nil),
            ("trained dictionary", .automatic(), nil),
            ("encrypted AES-GCM", .off, try? EncryptionAtRest(currentKey: .init(id: 1, key: aesKey))),
        ]
        for variant in variants {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "tiercache-bench-at-rest-\(size)-\(variant.name)")
            try? FileManager.default.removeItem(at: directory)
            guard
                let tier = try? LMDBTier(
                    directory: directory,
                    configuration: .init(
                        capacity: 1 << 30, dictionary: variant.dictionary, encryption: variant.encryption,
                        durability: .none))
            else { continue }
            let now = Date()
            for (index, value) in trainingValues.enumerated() {
                guard let key = try? CacheKey("train-\(index)") else { continue }
                _ = try? tier.store(CacheEntry(value: value, storedAt: now), forKey: key)
                try? tier.removeEntry(forKey: key)
            }
            for (key, value) in zip(keys, values) {
                _ = try? tier.store(CacheEntry(value: value, storedAt: now), forKey: key)
            }

            Benchmark("At rest get \(size) B JSON: LMDBTier \(variant.name)") { [cursor = AccessCursor()] benchmark in
                let start = cursor.take(benchmark.scaledIterations.count)
                for iteration in benchmark.scaledIterations {
                    blackHole(try? tier.entry(forKey: keys[(start &+ iteration) % keys.count]))
                }
            }
            Benchmark("At rest set \(size) B JSON: LMDBTier \(variant.name)") { [cursor = AccessCursor()] benchmark in
                let start = cursor.take(benchmark.scaledIterations.count)
                for iteration in benchmark.scaledIterations {
                    let index = (start &+ iteration) % keys.count
                    blackHole(try? tier.store(CacheEntry(value: values[index], storedAt: now), forKey: keys[index]))
                }
            }
        }
    }
}
