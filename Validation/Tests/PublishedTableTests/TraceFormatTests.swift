import CacheSimulation
import Testing

/// Every stored trace format reads with the request and object counts its README states.
@Suite(.enabled(if: SharedTraces.available, SharedTraces.missingMessage))
struct TraceFormatTests {
    @Test(arguments: [
        ("lirs/2_pools.trace.gz", 100_000, 9_939),
        ("lirs/loop.trace.gz", 505_500, 1_011),
        ("lirs/cs.trace.gz", 6_781, 1_409),
        ("lirs/gli.trace.gz", 6_015, 2_529),
        ("cache2k/web07.trace.xz", 76_118, 20_484),
        ("cache2k/orm-busy.trace.xz", 5_000_000, 76_349),
        ("libcachesim/cloudPhysicsIO.oracleGeneral.bin.zst", 113_872, 48_974),
        ("libcachesim/cloudPhysicsIO.csv.zst", 113_872, 48_974),
    ])
    func counts(file: String, requests: Int, objects: Int) throws {
        let trace = try SharedTraces.trace(file)
        #expect(trace.requestCount == requests)
        #expect(trace.objectCount == objects)
    }

    @Test func oracleGeneralFootprintMatchesTheReadme() throws {
        let trace = try SharedTraces.trace("libcachesim/cloudPhysicsIO.oracleGeneral.bin.zst")
        #expect(trace.hasSizes)
        #expect(trace.footprintBytes == 2_029_769_728)
    }
}
