import Testing
import TierCacheEviction

/// The queues' storage: copies that change apart, growth that keeps what is queued, and slots
/// beyond the arrays that read as in no queue.
@Suite struct SlotQueuesTests {
    /// Slots 0, 1, 2 pushed at the head of queue 1, each of size `slot + 1`.
    private func threeQueued() -> SlotQueues {
        var queues = SlotQueues(queueCount: 2, reserving: 4)
        for slot: UInt32 in 0..<3 {
            queues.setSize(UInt64(slot) + 1, of: slot)
            queues.pushHead(slot, 1)
        }
        return queues
    }

    @Test func copiesChangeApart() {
        let original = threeQueued()
        var copy = original
        copy.remove(0)
        copy.moveToHead(1, 2)
        copy.setTag(9, of: 2)
        #expect(original.members(of: 1) == [2, 1, 0])
        #expect(original.weight(1) == 6)
        #expect(original.count(2) == 0)
        #expect(original.tag(of: 2) == 0)
        #expect(copy.members(of: 1) == [2])
        #expect(copy.members(of: 2) == [1])
        #expect(copy.weight(1) == 3)
        #expect(copy.tag(of: 2) == 9)
    }

    @Test func growingKeepsTheQueues() {
        var queues = threeQueued()
        queues.setSize(5, of: 10_000)
        queues.pushTail(10_000, 1)
        #expect(queues.slotCapacity > 10_000)
        #expect(queues.members(of: 1) == [2, 1, 0, 10_000])
        #expect(queues.weight(1) == 11)
        #expect(queues.size(of: 1) == 2)
    }

    @Test func slotsBeyondTheArraysAreInNoQueue() {
        var queues = threeQueued()
        #expect(queues.queue(of: 1_000_000) == SlotQueues.none)
        queues.remove(1_000_000)
        #expect(queues.members(of: 1) == [2, 1, 0])
    }

    @Test func removeAllEmptiesEveryQueueOfOneCopyOnly() {
        let original = threeQueued()
        var copy = original
        copy.removeAll()
        #expect(copy.members(of: 1).isEmpty)
        #expect(copy.weight(1) == 0)
        #expect(copy.queue(of: 0) == SlotQueues.none)
        #expect(original.members(of: 1) == [2, 1, 0])
    }
}
