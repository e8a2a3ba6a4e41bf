import CacheSimulation
import Foundation
import Testing

/// W-TinyLFU is never meaningfully worse than LRU: on every shared trace, at 0.1%, 1%, 10% and 50%
/// of its footprint, its miss ratio is at most 0.005 above LRU's. The W-TinyLFU paper (Einziger,
/// Friedman & Manes, ACM TOS 2017) and Caffeine's published results show an adaptive W-TinyLFU
/// matching or beating LRU on database and storage traces; ours reaches it by sizing the window
/// with miniature simulation, whose candidates include the whole-cache window, which is LRU.
///
/// Three cells, on two of the LIRS paper's small synthetic traces, are allowed 0.015: backf (9,000
/// requests) at 10% and 50%, and zigzag (52,001 requests) at 50%. On both, LRU equals Belady's MIN
/// (it is optimal), and the whole gap is lost in the first pass over the objects, where every
/// admission contest is a tie that keeps the older object, before the miniatures can show that a
/// larger window wins (docs/eviction-policies.md). They are listed so that a regression there
/// still fails, and the second test holds them to the reference: where LRU is optimal, W-TinyLFU
/// as the reference simulator implements it loses more than ours.
@Suite(.enabled(if: SharedTraces.available, SharedTraces.missingMessage), .serialized)
struct WTinyLFUAgainstLRUTests {
    static let fractions = [0.001, 0.01, 0.1, 0.5]
    static let shortTraceAllowances: [String: Double] = [
        "lirs/backf.trace.gz@0.1": 0.015, "lirs/backf.trace.gz@0.5": 0.015, "lirs/zigzag.trace.gz@0.5": 0.015,
    ]

    /// Every trace file in the shared folder's ARC, LIRS and cache2k sets, and libCacheSim's
    /// CloudPhysics sample: the traces of `docs/eviction-policies.md`.
    static func traceFiles() throws -> [String] {
        guard let directory = SharedTraces.directory else { return [] }
        var files: [String] = []
        for (folder, suffix) in [("arc", ".lis.zst"), ("lirs", ".trace.gz"), ("cache2k", ".trace.xz")] {
            let names = try FileManager.default.contentsOfDirectory(
                atPath: directory.appendingPathComponent(folder).path)
            files += names.filter { $0.hasSuffix(suffix) }.sorted().map { "\(folder)/\($0)" }
        }
        return files + ["libcachesim/cloudPhysicsIO.oracleGeneral.bin.zst"]
    }

    @Test("W-TinyLFU's miss ratio is at most 0.005 above LRU's on every shared trace from 0.1% to 50% of the footprint")
    func neverBehindLRU() throws {
        let files = try Self.traceFiles()
        #expect(files.count >= 20, "the shared traces: \(files)")
        var cells = 0
        for file in files {
            let trace = try Trace.load(TraceReader(path: SharedTraces.path(file)))
            let simulator = try Simulator(trace: trace, unit: .objects)
            let capacities = Self.fractions.map {
                CapacitySpecification.fraction($0).resolve(for: trace, unit: .objects)
            }
            let results = simulator.replay(policies: [.lru, .wtinylfu], capacities: capacities)
            for (index, fraction) in Self.fractions.enumerated() {
                let lru = results[index], tinyLFU = results[capacities.count + index]
                let excess = (1 - tinyLFU.hitRatio) - (1 - lru.hitRatio)
                let allowance = Self.shortTraceAllowances["\(file)@\(fraction)"] ?? 0.005
                #expect(
                    excess <= allowance,
                    "\(file) at \(fraction * 100)% (\(capacities[index]) objects): W-TinyLFU misses \(1 - tinyLFU.hitRatio), LRU \(1 - lru.hitRatio)"
                )
                cells += 1
            }
        }
        print("W-TinyLFU against LRU: \(cells) cells checked")
    }

    /// A large cache on a long recency-heavy trace: P12 at 524,288 objects (16.6% of its
    /// footprint), where the miniatures once sampled 1 request in 2,048 and the window never left
    /// 1% (0.4023 misses against LRU's 0.3909). With the sample never sparser than 1 in 128 it
    /// misses 0.3887.
    @Test("W-TinyLFU is not behind LRU on P12 at 524,288 objects")
    func largeCacheOnP12() throws {
        let simulator = try Simulator(trace: SharedTraces.trace("arc/P12.lis.zst"), unit: .objects)
        let results = simulator.replay(policies: [.lru, .wtinylfu], capacities: [524_288])
        let (lru, tinyLFU) = (1 - results[0].hitRatio, 1 - results[1].hitRatio)
        #expect(tinyLFU <= lru + 0.005, "W-TinyLFU misses \(tinyLFU), LRU \(lru)")
    }

    /// libCacheSim 0.3.5's LRU and WTinyLFU (window 1%, SLRU main cache, its defaults) on the
    /// cells above and zigzag at 10%, hit ratios in percent, as `scripts/libcachesim-reference.py`
    /// prints them.
    static let referenceCells: [(trace: String, capacity: UInt64, lru: Double, wTinyLFU: Double)] = [
        ("lirs/backf.trace.gz", 75, 9.1667, 0.0000),
        ("lirs/backf.trace.gz", 375, 45.8333, 38.0778),
        ("lirs/zigzag.trace.gz", 200, 9.5671, 8.0056),
        ("lirs/zigzag.trace.gz", 1000, 48.0279, 47.2472),
    ]

    @Test(
        "Where LRU is optimal (it equals Belady's MIN), W-TinyLFU hits at least as often as libCacheSim's W-TinyLFU",
        arguments: Self.referenceCells.map { "\($0.trace)@\($0.capacity)" })
    func whereLRUIsOptimal(cell: String) throws {
        let reference = try #require(Self.referenceCells.first { "\($0.trace)@\($0.capacity)" == cell })
        let simulator = try Simulator(trace: SharedTraces.trace(reference.trace), unit: .objects)
        let results = simulator.replay(policies: [.lru, .belady, .wtinylfu], capacities: [reference.capacity])
        let (lru, belady, tinyLFU) = (results[0].hitRatio * 100, results[1].hitRatio * 100, results[2].hitRatio * 100)
        // The same LRU as the reference, and no policy can beat it here: MIN is optimal.
        #expect(abs(lru - reference.lru) <= 0.0001, "LRU on \(cell): \(lru) vs libCacheSim \(reference.lru)")
        #expect(abs(lru - belady) <= 0.0001, "LRU \(lru) vs Belady \(belady) on \(cell)")
        #expect(
            tinyLFU >= reference.wTinyLFU - 0.0001,
            "W-TinyLFU on \(cell): \(tinyLFU) vs libCacheSim \(reference.wTinyLFU)")
    }
}
