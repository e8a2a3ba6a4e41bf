import Testing
import TierCacheRecords

/// The accesses a disk tier's lookups note, applied by its next write: kept when that write's
/// transaction does not commit.
@Suite("Access log")
struct AccessLogTests {
    let a: [UInt8] = [1], b: [UInt8] = [2], c: [UInt8] = [3], d: [UInt8] = [4]

    @Test("Drained keys come in access order, and a commit lets them go")
    func drainInOrder() {
        let log = AccessLog()
        for key in [a, b, a, c] { log.noteAccess(key) }
        #expect(log.drain() == [b, a, c])
        log.committed()
        log.restoreUncommitted()
        #expect(log.drain().isEmpty, "committed: nothing comes back")
    }

    @Test("Keys drained by a write that did not commit come back, older than what was read since")
    func restoredBeforeNewer() {
        let log = AccessLog()
        for key in [a, b, c] { log.noteAccess(key) }
        #expect(log.drain() == [a, b, c])
        log.noteAccess(d)
        log.noteAccess(b)  // read again since: its newer access stands
        log.restoreUncommitted()
        #expect(log.drain() == [a, c, d, b])
    }

    @Test("Past the limit, the newest restored keys are kept")
    func restoredWithinTheLimit() {
        let log = AccessLog(limit: 2)
        for key in [a, b] { log.noteAccess(key) }
        #expect(log.drain() == [a, b])
        log.noteAccess(c)
        log.restoreUncommitted()
        #expect(log.drain() == [b, c])
    }

    @Test("Emptying the log drops what a write holds too")
    func removeAllDropsUncommitted() {
        let log = AccessLog()
        log.noteAccess(a)
        _ = log.drain()
        log.removeAll()
        log.restoreUncommitted()
        #expect(log.drain().isEmpty)
    }
}
