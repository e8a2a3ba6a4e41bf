import Testing

@testable import TierCacheEviction

/// The frequency sketch's storage: counters that saturate, copies that do not share counts,
/// blocks that each fill one cache line, and aging that halves.
@Suite struct TinyLFUSketchTests {
    @Test func countsSaturateAtFifteen() {
        var sketch = TinyLFUSketch()
        sketch.ensureCapacity(1_024)
        let key = TinyLFUSketch.mix(7, 0)
        for expected in 1...15 {
            sketch.increment(key)
            #expect(sketch.frequency(key) == expected)
        }
        for _ in 0..<10 { sketch.increment(key) }
        #expect(sketch.frequency(key) == 15)
    }

    @Test func countsNothingBeforeItIsSized() {
        var sketch = TinyLFUSketch()
        sketch.increment(TinyLFUSketch.mix(1, 0))
        #expect(!sketch.isInitialized)
        #expect(sketch.frequency(TinyLFUSketch.mix(1, 0)) == 0)
    }

    @Test func copiesCountApart() {
        var original = TinyLFUSketch()
        original.ensureCapacity(1_024)
        let key = TinyLFUSketch.mix(42, 0)
        for _ in 0..<3 { original.increment(key) }
        var copy = original
        for _ in 0..<2 { copy.increment(key) }
        #expect(original.frequency(key) == 3)
        #expect(copy.frequency(key) == 5)
        original.increment(key)
        #expect(original.frequency(key) == 4)
        #expect(copy.frequency(key) == 5)
    }

    @Test(arguments: [8, 64, 1 << 10, 1 << 17, 1 << 19], [true, false])
    func blocksStartOnCacheLines(words: Int, readAtRandom: Bool) {
        let table = AlignedWords(count: words, readAtRandom: readAtRandom)
        #expect(Int(bitPattern: table.base) % 64 == 0)
        #expect((0..<words).allSatisfy { table.base[$0] == 0 })
        table.base[words - 1] = 7
        let copy = AlignedWords(copying: table)
        #expect(Int(bitPattern: copy.base) % 64 == 0)
        #expect(copy.readAtRandom == readAtRandom)
        #expect(copy.base[words - 1] == 7)
    }

    /// After `10 × entries` additions every counter halves: a key counted 15 times reads 7 right
    /// after the addition that triggers it.
    @Test func agingHalvesEveryCounter() {
        var sketch = TinyLFUSketch()
        sketch.ensureCapacity(8)
        let hot = TinyLFUSketch.mix(0, 0)
        for _ in 0..<15 { sketch.increment(hot) }
        #expect(sketch.frequency(hot) == 15)
        var additions = 15
        var other: UInt32 = 1
        while sketch.frequency(hot) == 15, additions < 1_000 {
            sketch.increment(TinyLFUSketch.mix(other, 0))
            other += 1
            additions += 1
        }
        #expect(sketch.frequency(hot) == 7)
        #expect(additions >= sketch.sampleSize)
    }

    /// A remembered estimate is the estimate: after counts of keys in its block, of keys
    /// elsewhere, agings and a resize, it reads what ``TinyLFUSketch/frequency(folded:)`` reads.
    /// Small tables (8 and 64 blocks) put many keys in each block, and age every 640 and 5,120
    /// counts.
    @Test(arguments: [64, 512])
    func rememberedEstimatesFollowCounts(entries: Int) {
        var sketch = TinyLFUSketch()
        sketch.ensureCapacity(entries)
        var random: UInt64 = 11
        func next(_ bound: UInt32) -> UInt32 {
            random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt32(truncatingIfNeeded: random >> 33) % bound
        }
        let folded = (0..<5_000).map { TinyLFUSketch.fold(TinyLFUSketch.mix($0, 0)) }
        var generations = Set<Int>()
        for step in 0..<20_000 {
            if step == 15_000 { sketch.ensureCapacity(entries * 4) }
            // Skewed counts, so that estimates differ and saturate.
            let key = folded[Int(min(next(5_000), next(5_000)))]
            sketch.incrementKnowingUnique(folded: key)
            generations.insert(sketch.generation)
            let asked = folded[Int(next(8))]
            #expect(sketch.rememberedFrequency(folded: asked) == sketch.frequency(folded: asked))
        }
        // Agings and the resize happened: the memory was forgotten at each.
        #expect(generations.count > 3)
    }
}
