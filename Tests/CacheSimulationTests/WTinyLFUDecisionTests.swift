import CacheSimulation
import Foundation
import Testing

/// W-TinyLFU's decisions on real traces, pinned: the hits and hit bytes of every capacity below
/// are the ones the policy's general eviction loop (Caffeine's `evictFromWindow` then
/// `evictFromMain`) gives. The policy decides a full cache's usual miss in one step instead
/// (`admitWindowsOldest`), and its prefetching and memory layout change for speed; none of that
/// may change a decision, in object mode or in byte mode. The figures were taken from the
/// replays with the one-step path switched off, and from the code before it (d8bcac1). web07 at
/// 20 objects has the miniatures give the window the whole cache, where the one step takes the
/// candidate out of an empty probation's place without moving it in.
@Suite struct WTinyLFUDecisionTests {
    private static var folder: String? { ProcessInfo.processInfo.environment["TIERCACHE_TRACES"] }

    private static func expectPinned(
        _ path: String, unit: CapacityUnit, limit: Int? = nil,
        _ pinned: [(capacity: UInt64, hits: Int, hitBytes: UInt64)]
    ) throws {
        guard let folder else {
            print("skipped: set TIERCACHE_TRACES to the public trace folder to replay real traces")
            return
        }
        let trace = try Trace.load(TraceReader(path: folder + "/" + path), limit: limit)
        let simulator = try Simulator(trace: trace, unit: unit)
        for expected in pinned {
            let result = simulator.replay(.wtinylfu, capacity: expected.capacity)
            #expect(result.hits == expected.hits, "\(path) at \(expected.capacity)")
            #expect(result.hitBytes == expected.hitBytes, "\(path) at \(expected.capacity)")
        }
    }

    @Test("Byte mode: libCacheSim's CloudPhysics sample at 0.5% to 30% of its footprint")
    func cloudPhysicsInBytes() throws {
        try Self.expectPinned(
            "libcachesim/cloudPhysicsIO.oracleGeneral.bin.zst", unit: .bytes,
            [
                (10_148_848, 19_685, 90_776_576), (20_297_697, 20_300, 101_598_208),
                (40_595_394, 20_992, 138_794_496), (101_488_486, 24_703, 335_559_168),
                (202_976_972, 29_443, 605_208_064), (608_930_918, 32_834, 814_142_464),
            ])
    }

    @Test("Object mode: cache2k's web07 at 0.1% to 20% of its objects")
    func web07InObjects() throws {
        try Self.expectPinned(
            "cache2k/web07.trace.xz", unit: .objects,
            [(20, 18_814, 18_814), (204, 33_385, 33_385), (1_024, 40_862, 40_862), (4_096, 46_805, 46_805)])
    }
}
