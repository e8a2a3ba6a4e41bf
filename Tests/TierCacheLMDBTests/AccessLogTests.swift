import Testing
import TierCacheRecords

/// The accesses a disk tier's lookups note, applied by its next write: given back when that
/// write's transaction does not commit.
@Suite("Access log")
struct AccessLogTests {
    let a: [UInt8] = [1], b: [UInt8] = [2], c: [UInt8] = [3], d: [UInt8] = [4]

    @Test("Drained keys come in access order, and leave the log")
    func drainInOrder() {
        let log = AccessLog()
        for key in [a, b, a, c] { log.noteAccess(key) }
        #expect(log.drain() == [b, a, c])
        #expect(log.drain().isEmpty)
    }

    @Test("Keys a write gives back come before what was read since")
    func restoredBeforeNewer() {
        let log = AccessLog()
        for key in [a, b, c] { log.noteAccess(key) }
        let applied = log.drain()
        log.noteAccess(d)
        log.noteAccess(b)  // read again since: its newer access stands
        log.restore(applied)
        #expect(log.drain() == [a, c, d, b])
    }

    @Test("Past the limit, the newest keys given back are kept")
    func restoredWithinTheLimit() {
        let log = AccessLog(limit: 2)
        for key in [a, b] { log.noteAccess(key) }
        let applied = log.drain()
        log.noteAccess(c)
        log.restore(applied)
        #expect(log.drain() == [b, c])
    }
}
