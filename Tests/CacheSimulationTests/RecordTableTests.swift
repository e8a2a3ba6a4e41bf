import Testing

@testable import TierCacheEviction

/// The miniatures' key → record table answers as a dictionary does, through growth and through
/// removals that shift runs of colliding keys back.
@Suite struct RecordTableTests {
    /// Keys alike in their low bits (as the sample's are), keys spread at random, and keys that
    /// all share home slot 0 at every table size: small multiples of the inverse of the table's
    /// multiplier, whose products are the small multiples themselves (one run, as long as the table
    /// holds keys, which every removal shifts back).
    static let keySets: [(String, [UInt64])] = [
        ("alike in their low bits", (0..<3_000).map { UInt64($0) << 32 }),
        ("random", (0..<3_000).map { _ in UInt64.random(in: .min ... .max) }),
        ("one home slot", (1...300).map { multiplierInverse &* UInt64($0) }),
    ]

    /// The inverse of the table's Fibonacci multiplier modulo 2^64 (Newton's iteration).
    static let multiplierInverse: UInt64 = {
        let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
        var inverse = multiplier
        for _ in 0..<6 { inverse &*= 2 &- multiplier &* inverse }
        return inverse
    }()

    @Test func theMultiplierInverseIsItsInverse() {
        #expect(Self.multiplierInverse &* 0x9E37_79B9_7F4A_7C15 == 1)
    }

    @Test(arguments: 0..<keySets.count)
    func agreesWithADictionary(keySet: Int) {
        let keys = Self.keySets[keySet].1
        var table = RecordTable()
        var model: [UInt64: Int32] = [:]
        var generator = SystemRandomNumberGenerator()
        for step in 0..<40_000 {
            let key = keys[Int.random(in: 0..<keys.count, using: &generator)]
            if model[key] == nil {
                let record = Int32(step)
                table.insert(key, record: record)
                model[key] = record
            } else if Bool.random(using: &generator) {
                table.remove(key)
                model[key] = nil
            }
            #expect(table.record(for: key) == model[key])
            #expect(table.count == model.count)
        }
        for key in keys {
            #expect(table.record(for: key) == model[key], "key \(key)")
        }
    }

    @Test func removingAnAbsentKeyChangesNothing() {
        var table = RecordTable()
        table.insert(1, record: 10)
        table.insert(2, record: 20)
        table.remove(3)
        #expect(table.count == 2)
        #expect(table.record(for: 1) == 10)
        #expect(table.record(for: 2) == 20)
        #expect(table.record(for: 3) == nil)
    }

    @Test func emptiesCompletely() {
        var table = RecordTable()
        let keys = (0..<1_000).map { UInt64($0) &* 0x1_0000_0001 }
        for (index, key) in keys.enumerated() { table.insert(key, record: Int32(index)) }
        for key in keys { table.remove(key) }
        #expect(table.count == 0)
        #expect(keys.allSatisfy { table.record(for: $0) == nil })
    }
}
