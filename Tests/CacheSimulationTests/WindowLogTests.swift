import Testing

@testable import TierCacheEviction

/// The window's log that names W-TinyLFU's coming candidates (`WindowLog`): a hint, so what it
/// must get right is where it looks and that copies never share what they write.
@Suite struct WindowLogTests {
    /// A log turned on with `objects` in the window, oldest first, each folded hash its object
    /// plus 1,000.
    private func log(oldestFirst objects: [UInt32]) -> WindowLog {
        var log = WindowLog()
        log.rebuild(oldestFirst: objects.map { ($0, $0 + 1_000) })
        return log
    }

    @Test("A log that is off logs nothing and finds nothing")
    func offLogIgnoresArrivals() {
        var log = WindowLog()
        log.append(7, folded: 1)
        let found = log.seek(7)
        #expect(!log.isActive)
        #expect(!found)
        #expect(log.entry(after: 0) == nil)
    }

    @Test("The candidates after the oldest are the arrivals after its own, stale ones included")
    func seekFindsTheOldestAndTheCandidatesAfterIt() throws {
        var log = log(oldestFirst: [1, 2, 3])
        log.append(2, folded: 1_002)  // 2 arrived again: its first entry is stale
        log.append(4, folded: 1_004)
        let foundOne = log.seek(1)
        #expect(foundOne)
        #expect(log.entry(after: 1)?.object == 2)
        // 1 left: the oldest is now 3 (2 arrived again after it); the cursor passes 1 and 2.
        let foundThree = log.seek(3)
        #expect(foundThree)
        let next = try #require(log.entry(after: 1))
        #expect(next.object == 2 && next.folded == 1_002)
        #expect(log.entry(after: 2)?.object == 4)
        #expect(log.entry(after: 3) == nil)
    }

    @Test("An object the log does not hold is not found, and the cursor stays")
    func failedSeekLeavesTheCursor() {
        var log = log(oldestFirst: [5, 6])
        let foundAbsent = log.seek(99)
        let foundOldest = log.seek(5)
        #expect(!foundAbsent)
        #expect(foundOldest)
        #expect(log.entry(after: 1)?.object == 6)
    }

    @Test("Growing keeps every entry from the cursor on, in order")
    func growthKeepsTheCandidates() {
        var log = log(oldestFirst: [])
        for object in UInt32(0)..<5_000 { log.append(object, folded: object + 1_000) }
        let found = log.seek(2_000)
        #expect(found)
        for object in UInt32(5_000)..<9_000 { log.append(object, folded: object + 1_000) }
        for distance in [1, 2_999, 6_999] {
            let entry = log.entry(after: distance)
            #expect(entry?.object == UInt32(2_000 + distance) && entry?.folded == UInt32(3_000 + distance))
        }
        #expect(log.entry(after: 7_000) == nil)
    }

    @Test("Copies share entries only until one of them is made unique")
    func copiesPart() {
        let original = log(oldestFirst: [1, 2])
        var copy = original
        copy.makeUnique()
        copy.append(3, folded: 1_003)
        var originalAfterCopy = original
        originalAfterCopy.makeUnique()
        originalAfterCopy.append(4, folded: 1_004)
        let copyFound = copy.seek(2)
        let originalFound = originalAfterCopy.seek(2)
        #expect(copyFound && copy.entry(after: 1)?.object == 3)
        #expect(originalFound && originalAfterCopy.entry(after: 1)?.object == 4)
    }
}
