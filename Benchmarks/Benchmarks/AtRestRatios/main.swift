import Crypto
import Foundation
import TierCache
import TierCacheEncryption
import TierCacheLMDB
import Workloads

// What lies on disk (issue 17): for JSON responses of 256 B, 1 KiB and 4 KiB, the compression
// ratio and the get and set throughput of LMDBTier with no dictionary, with a dictionary it
// trained itself (automatic), with encryption (AES-GCM), and with both. Throughput is measured in
// interleaved rounds (each round times every variant once, in alternating order) and reported
// as the median over rounds of each variant's rate divided by the plain tier's in the same
// round: on a shared machine the speed drifts by more than the differences measured.
//
// Each variant's store is first given other responses of the same API (a different seed) to
// train on, which are then removed; the responses measured were never among the samples.
// Stores run with `Durability.none` so that the codec's cost is not hidden behind fsync.
//   AtRestRatios [rounds] [entries]   (defaults 9 and 2,000)

//   AtRestRatios profile SIZE ROUNDS [plain]   ROUNDS × 2,000 gets from one tier (encrypted unless plain), for a profiler

let numbers = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let rounds = numbers.first ?? 9
let entries = numbers.dropFirst().first ?? 2_000
let aesKey = SymmetricKey(data: [UInt8](repeating: 0x5A, count: 32))

struct Variant {
    let name: String
    let dictionary: Bool
    let encrypted: Bool
}

let variants = [
    Variant(name: "no dictionary", dictionary: false, encrypted: false),
    Variant(name: "trained dictionary", dictionary: true, encrypted: false),
    Variant(name: "encrypted (AES-GCM)", dictionary: false, encrypted: true),
    Variant(name: "dictionary + encrypted", dictionary: true, encrypted: true),
]

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
}

func timed(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    return Double(entries) / ((ContinuousClock.now - start) / .seconds(1))
}

if CommandLine.arguments.dropFirst().first == "profile" {
    let size = numbers.first ?? 256, rounds = numbers.dropFirst().first ?? 100
    let encrypted = !CommandLine.arguments.contains("plain")
    let workload = AtRestWorkload(size: size, entries: 2_000)
    let (values, keys) = (workload.values, workload.keys)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tiercache-at-rest-profile")
    try? FileManager.default.removeItem(at: directory)
    let encryption = encrypted ? try EncryptionAtRest(currentKey: .init(id: 1, key: aesKey)) : nil
    let tier = try LMDBTier(
        directory: directory, configuration: .init(capacity: 1 << 30, encryption: encryption, durability: .none))
    for (key, value) in zip(keys, values) {
        _ = try tier.store(CacheEntry(value: value, storedAt: Date()), forKey: key)
    }
    let start = ContinuousClock.now
    for _ in 0..<rounds {
        for key in keys { _ = try tier.entry(forKey: key) }
    }
    print("\(Double(rounds * keys.count) / ((ContinuousClock.now - start) / .seconds(1))) gets/s")
    exit(0)
}
if CommandLine.arguments.dropFirst().first == "crypto" {
    // swift-crypto's AES-GCM open of a 1 KiB box, with raw buffers or with `Data`, in rounds.
    let plaintext = [UInt8](repeating: 7, count: 1_024), context = [UInt8](repeating: 1, count: 40)
    let box = [UInt8](try AES.GCM.seal(plaintext, using: aesKey, authenticating: context).combined!)
    let count = 200_000
    func rate(_ body: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        for _ in 0..<count { try body() }
        return Double(count) / ((ContinuousClock.now - start) / .seconds(1))
    }
    var raw: [Double] = [], data: [Double] = []
    for _ in 0..<5 {
        raw.append(
            try box.withUnsafeBytes { boxBytes in
                try context.withUnsafeBytes { contextBytes in
                    try rate {
                        _ = [UInt8](
                            try AES.GCM.open(
                                AES.GCM.SealedBox(combined: boxBytes), using: aesKey, authenticating: contextBytes))
                    }
                }
            })
        data.append(
            try box.withUnsafeBytes { boxBytes in
                try context.withUnsafeBytes { contextBytes in
                    try rate {
                        _ = [UInt8](
                            try AES.GCM.open(
                                AES.GCM.SealedBox(combined: Data(boxBytes)), using: aesKey,
                                authenticating: Data(contextBytes)))
                    }
                }
            })
    }
    let chachaBox = [UInt8](try ChaChaPoly.seal(plaintext, using: aesKey, authenticating: context).combined)
    let chacha = try chachaBox.withUnsafeBytes { boxBytes in
        try context.withUnsafeBytes { contextBytes in
            try rate {
                _ = [UInt8](
                    try ChaChaPoly.open(
                        ChaChaPoly.SealedBox(combined: boxBytes), using: aesKey, authenticating: contextBytes))
            }
        }
    }
    print("AES-GCM: raw buffers \(median(raw)) opens/s, Data \(median(data)) opens/s; ChaChaPoly \(chacha) opens/s")
    exit(0)
}
var notes: [String] = []
print(
    "| JSON size | variant | value ÷ compressed | value ÷ stored record | get vs no dictionary | set vs no dictionary |"
)
print("|---|---|---|---|---|---|")
for size in [256, 1_024, 4_096] {
    let workload = AtRestWorkload(size: size, entries: entries)
    let (trainingValues, values, keys) = (workload.trainingValues, workload.values, workload.keys)
    let now = Date()

    var tiers: [LMDBTier] = []
    var directories: [URL] = []
    var lines: [String] = []
    for variant in variants {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tiercache-at-rest-\(UUID().uuidString)")
        directories.append(directory)
        let encryption = variant.encrypted ? try EncryptionAtRest(currentKey: .init(id: 1, key: aesKey)) : nil
        let tier = try LMDBTier(
            directory: directory,
            configuration: .init(
                capacity: 1 << 30, dictionary: variant.dictionary ? .automatic() : .off, encryption: encryption,
                durability: .none))
        var slowestStore = Duration.zero
        for (index, value) in trainingValues.enumerated() {
            guard let key = try? CacheKey("train-\(index)") else { continue }
            let start = ContinuousClock.now
            _ = try tier.store(CacheEntry(value: value, storedAt: now), forKey: key)
            slowestStore = max(slowestStore, ContinuousClock.now - start)
            _ = try tier.removeEntry(forKey: key)
        }
        if variant.dictionary {
            let trained = try tier.storedDictionaries()
            if trained.isEmpty { print("warning: \(variant.name) trained no dictionary at \(size) B") }
            // The store that filled the sample ring trained the dictionary on its thread.
            notes.append(
                "\(size) B, \(variant.name): dictionary of \(trained.first?.bytes ?? 0) bytes on \(trained.first?.samples ?? 0) "
                    + "samples; the store that trained it took \(slowestStore)")
        }
        for (key, value) in zip(keys, values) {
            _ = try tier.store(CacheEntry(value: value, storedAt: now), forKey: key)
        }
        let report = try LMDBTier.inspect(directory: directory, encryption: encryption)
        let compressed = report.compressionRatio
        let stored = Double(report.valueBytes) / Double(max(1, report.recordBytes))
        lines.append(String(format: "%.2f | %.2f", compressed, stored))
        tiers.append(tier)
    }

    var getRatios = Array(repeating: [Double](), count: variants.count)
    var setRatios = Array(repeating: [Double](), count: variants.count)
    for round in 0..<rounds {
        var gets = Array(repeating: 0.0, count: variants.count)
        var sets = Array(repeating: 0.0, count: variants.count)
        let order = round % 2 == 0 ? Array(variants.indices) : variants.indices.reversed()
        for index in order {
            let tier = tiers[index]
            gets[index] = try timed {
                for key in keys where try tier.entry(forKey: key) == nil { print("miss in \(variants[index].name)") }
            }
            sets[index] = try timed {
                for (key, value) in zip(keys, values) {
                    _ = try tier.store(CacheEntry(value: value, storedAt: now), forKey: key)
                }
            }
        }
        for index in variants.indices {
            getRatios[index].append(gets[index] / gets[0])
            setRatios[index].append(sets[index] / sets[0])
        }
    }
    for (index, variant) in variants.enumerated() {
        print(
            "| \(size) B | \(variant.name) | \(lines[index]) | "
                + String(format: "%.2fx | %.2fx |", median(getRatios[index]), median(setRatios[index])))
    }
    tiers.removeAll()
    for directory in directories { try? FileManager.default.removeItem(at: directory) }
}
for note in notes { print(note) }
