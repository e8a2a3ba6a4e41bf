/// How W-TinyLFU sizes its admission window: by miniature simulation (Waldspurger et al.,
/// "Cache Modeling and Optimization using Miniature Simulation", USENIX ATC 2017), as the
/// `MiniSimClimber` of Caffeine's simulator does (Eytan, Einziger, Friedman & Manes).
///
/// Caffeine's production hill climber moves the window by 6.25% of the capacity once per
/// `10 × entries` requests, in whichever direction last raised the hit rate. On recency-heavy
/// workloads (database and storage block traces) that is far too slow: a cache that sees its
/// working set turn over a dozen times in all gets four or five steps, starts from a 1% window,
/// and stays behind plain LRU by several points of miss ratio. Miniature simulation measures
/// instead of probing: a spatially hashed sample of the keys (1 in `samplingModulus`) is replayed
/// through small W-TinyLFU caches, one per candidate window share from 1% to 100%, each scaled
/// to `capacity / samplingModulus`. Four times per turnover of a miniature's contents, the cache
/// takes the window of the miniature that missed least, in one move, if the evidence says so
/// (below). A 100% window is plain LRU, so the choice includes LRU's behaviour and W-TinyLFU
/// tracks the better of recency and frequency.
///
/// The miniatures' cost per request is kept within twice the sparsest sample's. A sampled request
/// costs about a real request in each of the fourteen miniatures, so a cache sampled at 1 in 12
/// keys (a cache of 3,153 entries) spent two fifths of its replay on its miniatures, and W-TinyLFU
/// replayed a long trace at a quarter of LRU's speed. So, in a cache sampled at 1 key in `m` ≤ 64
/// (fewer than 16,640 entries), the miniatures watch in spells once the cache has run in: after
/// ``warmUpTurnovers`` turnovers and at least ``warmUpRequests`` requests from the start, they
/// watch for ``spellTurnovers`` turnovers, then rest while the real cache serves the requests
/// alone, so that they watch 1 request in `⌊128 / m⌋` (at least `m / 128` of them). A turnover is
/// the `entries` the cache was expected to hold at the start (the sampling rate rests on the same
/// estimate). The window and the evidence carry over a rest; the miniatures' contents, stale after
/// it, count as evidence too (the spell's first turnover replaces them). Evidence fades only while
/// the miniatures watch, so in such a cache ``evidenceHorizon`` counts watched turnovers: a lasting
/// change of workload wins within a few spells (8 turnovers each) rather than turnovers. A trace
/// shorter than the warm-up replays as before; on the 92 cells of `docs/eviction-policies.md` the
/// mean miss ratio moved by +0.0001 (the figures are there).
///
/// Two safeguards keep noise from moving the window (Caffeine's `MiniSimClimber` has neither and
/// flips between windows every period on workloads with recurring phases):
/// - Evidence accumulates and fades slowly (over ``evidenceHorizon`` turnovers), instead of being
///   judged one period at a time.
/// - The move must pass McNemar's test on the paired outcomes: counting the sampled requests that
///   the current window's miniature missed and the best one hit, and the other way round, the
///   first must exceed the second by ``significance`` standard deviations. The miniatures see the
///   same requests, so only these discordant requests tell them apart; cold misses, which all of
///   them take, add nothing, and a sparse sample of a large cache that cannot tell windows apart
///   leaves the window where it is.
struct MiniatureWindowClimber {
    /// The window shares the miniatures try: fine steps near Caffeine's 1% default, where
    /// frequency-skewed workloads do best, coarser ones up to 100% (LRU).
    static let windowShares: [Double] = [
        0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1,
    ]
    /// Entries a miniature holds at least (the sample is never sparser than that allows): at 256
    /// the miniature's miss ratios are within about 0.01 of full replays (the simulator's
    /// `MiniatureSimulation` measurements), fine enough to rank windows.
    static let minimumMiniatureEntries = 256
    /// The sparsest sample: larger caches get larger miniatures rather than a sparser sample. At
    /// 1 in `entries / 256` keys a cache of 524,288 objects replayed 1 request in 2,048 through
    /// its miniatures, 6,400 of P12's 13.2 million: too little evidence for the window ever to
    /// leave 1%, and W-TinyLFU stayed 0.011 behind LRU on that recency-heavy trace. 1 in 128 is
    /// where a cache of 32,768 objects already samples, so small caches are unchanged.
    static let maximumSamplingModulus = 128
    /// How many turnovers of the cache's contents the evidence spans (older evidence fades by
    /// half in about 44 turnovers): long enough that a workload's recurring phases average out,
    /// short enough that a lasting change of workload wins within a few dozen turnovers.
    static let evidenceHorizon = 64
    /// The one-sided z-score the paired evidence must reach to move the window (about 98%
    /// confidence): sampling noise in a sparse sample must not move it.
    static let significance = 2.0
    /// Turnovers the miniatures always watch after they start, before any rest (more than
    /// ``warmUpRequests`` only for caches of 16,385 entries and more).
    static let warmUpTurnovers = 64
    /// Requests the miniatures always watch after they start, before any rest: the spells save
    /// time on long replays, and on a short trace, where resting costs evidence the trace has
    /// too little of, watching costs a fraction of a second (a million requests through the
    /// miniatures of a cache of fewer than 512 entries, every key sampled).
    static let warmUpRequests = 1 << 20
    /// Turnovers a spell of watching lasts: the first turns the miniatures' stale contents over.
    static let spellTurnovers = 8

    /// None until ``start(capacity:entries:initialShare:)``: an empty set, not an optional (a
    /// sampled request reaches it through ``isWatching``, tested on every request; testing an
    /// optional there took 4 instructions).
    private var miniatures = MiniatureCaches(capacity: 1, windowShares: [])
    private var shareCount: Int { Self.windowShares.count }
    private var sketch = TinyLFUSketch()
    private var scores: [Double] = []
    private var discordant: [Double] = []
    private var allMissed: UInt32 = 0
    private var missesAtLastPeriod: [Int] = []
    private var sampledInPeriod = 0
    private var periodLength = 0
    private var decay = 1.0
    private var bestIndex = 0
    /// Which keys (by hash) are replayed through the miniatures: a multiplication, not a 64-bit
    /// division, since the test runs on every request (the division was a tenth of a miss's cost
    /// at 32,768 objects).
    private var sampleTest = SampleTest(modulus: 1)
    /// Whether a sampled request reaches the miniatures now: false before the start and in a rest.
    private(set) var isWatching = false
    /// Requests until the miniatures start or stop watching; `Int.max` where they never rest.
    private var countdown = Int.max
    /// Requests in a spell of watching, and in a rest; 0 where the miniatures never rest.
    private var spellRequests = 0
    private var restRequests = 0
    /// 1 in this many keys (by hash) is replayed through the miniatures.
    var samplingModulus: UInt64 { sampleTest.modulus }

    init() {}

    /// Whether ``start(capacity:entries:initialShare:)`` has run.
    var isStarted: Bool { !miniatures.isEmpty }

    /// The window share the miniatures currently rank best.
    var bestShare: Double { Self.windowShares[bestIndex] }

    /// Starts the miniatures for a cache of `capacity` (in its cost unit) expected to hold
    /// `entries` entries when full; the sampling rate keeps each miniature at
    /// ``minimumMiniatureEntries`` entries or more, and samples at least 1 key in
    /// ``maximumSamplingModulus``.
    mutating func start(capacity: Int, entries: Int, initialShare: Double) {
        sampleTest = SampleTest(
            modulus: UInt64(min(Self.maximumSamplingModulus, max(1, entries / Self.minimumMiniatureEntries))))
        let scaledCapacity = max(1, capacity / Int(samplingModulus))
        let scaledEntries = max(1, entries / Int(samplingModulus))
        miniatures = MiniatureCaches(capacity: scaledCapacity, windowShares: Self.windowShares)
        scores = [Double](repeating: 0, count: shareCount)
        discordant = [Double](repeating: 0, count: shareCount * shareCount)
        allMissed = UInt32(1 << shareCount) - 1
        missesAtLastPeriod = [Int](repeating: 0, count: shareCount)
        sketch = TinyLFUSketch()
        sketch.ensureCapacity(scaledEntries)
        // Decide four times per turnover of a miniature's contents (about one of the real cache's),
        // weighing the evidence of the last `evidenceHorizon` turnovers.
        periodLength = max(16, scaledEntries / 4)
        decay = 1 - Double(periodLength) / Double(Self.evidenceHorizon * scaledEntries)
        bestIndex = Self.windowShares.firstIndex { $0 >= initialShare } ?? 0
        sampledInPeriod = 0
        isWatching = true
        // Rest so that the miniatures watch 1 request in `⌊maximumSamplingModulus / m⌋`: never
        // from a sample of 1 key in 65 on.
        let restTurnovers = Self.spellTurnovers * (Self.maximumSamplingModulus / Int(samplingModulus) - 1)
        if restTurnovers > 0 {
            // Below 65 × `minimumMiniatureEntries` entries (16,640), so none of these products
            // comes near `Int.max`, on 32 bits either (at most 1,016 × 16,639 requests).
            let turnover = max(1, entries)
            spellRequests = Self.spellTurnovers * turnover
            restRequests = restTurnovers * turnover
            countdown = max(Self.warmUpTurnovers * turnover, Self.warmUpRequests)
        } else {
            (spellRequests, restRequests, countdown) = (0, 0, Int.max)
        }
    }

    /// Replays a request for the key hashed to `hash` (of `cost`) through the miniatures if the
    /// key is in the sample and they are watching. Called for every request the cache serves:
    /// spells and rests are counted in requests. Returns the window share to move to when a period
    /// ends with a new best miniature, else nil.
    @inline(__always)
    mutating func record(_ hash: UInt64, cost: Int) -> Double? {
        countdown &-= 1
        if countdown == 0 { toggleWatching() }
        guard isWatching, sampleTest.isMultiple(Self.sampleHash(hash)) else { return nil }
        return recordSampled(hash, cost: cost)
    }

    /// Ends the warm-up or a spell with a rest, or a rest with a spell.
    @inline(never)
    private mutating func toggleWatching() {
        // `Int.max` requests have passed (on 32 bits, 2^31) where the miniatures never rest, or
        // before the start: the count starts again.
        guard restRequests > 0 else {
            countdown = .max
            return
        }
        isWatching.toggle()
        countdown = isWatching ? spellRequests : restRequests
    }

    private mutating func recordSampled(_ hash: UInt64, cost: Int) -> Double? {
        let missed = miniatures.access(hash, cost: cost, sketch: &sketch)
        if missed != 0, missed != allMissed {
            // A request some miniatures missed and others hit: the evidence that tells windows apart.
            var rows = missed
            while rows != 0 {
                let row = rows.trailingZeroBitCount
                rows &= rows - 1
                var columns = ~missed & allMissed
                while columns != 0 {
                    let column = columns.trailingZeroBitCount
                    columns &= columns - 1
                    discordant[row * shareCount + column] += 1
                }
            }
        }
        sampledInPeriod += 1
        guard sampledInPeriod >= periodLength else { return nil }
        sampledInPeriod = 0
        for (index, misses) in miniatures.misses.enumerated() {
            scores[index] = scores[index] * decay + Double(misses - missesAtLastPeriod[index])
            missesAtLastPeriod[index] = misses
        }
        var best = bestIndex
        for index in scores.indices where scores[index] < scores[best] {
            best = index
        }
        for index in discordant.indices { discordant[index] *= decay }
        // McNemar's test on the paired outcomes: move only if the current window missed where
        // the best hit significantly more often than the other way round.
        let currentOnly = discordant[bestIndex * shareCount + best]
        let bestOnly = discordant[best * shareCount + bestIndex]
        // (When the best is the current window both counts are 0 and the test fails.)
        guard currentOnly - bestOnly > Self.significance * (currentOnly + bestOnly).squareRoot() else { return nil }
        bestIndex = best
        return Self.windowShares[best]
    }

    /// Decorrelates the sample from the sketch's and the key table's use of the same hash.
    @inline(__always)
    private static func sampleHash(_ hash: UInt64) -> UInt64 {
        var x = hash &* 0xD6E8_FEB8_6659_FD93
        x ^= x >> 32
        return x
    }
}

/// Whether a 64-bit number is a multiple of a fixed modulus, without a division: a mask for a
/// power of two (the usual modulus: 128 from 32,768 entries up), else by multiplication (Lemire,
/// Kaser & Kurz, "Faster Remainder by Direct Computation", 2019): with `c` = ⌈2^128 / modulus⌉,
/// `n` is a multiple exactly when `n × c mod 2^128 < c`, for every 64-bit `n`. Either way the same
/// answer as `n % modulus == 0`.
struct SampleTest {
    /// The modulus (at least 1).
    let modulus: UInt64
    /// `modulus - 1` when the modulus is a power of two (1 included).
    private let mask: UInt64
    /// Whether the modulus is a power of two. The same as `constant == 0`, but kept as a flag of
    /// its own: testing the 128-bit constant took 3 instructions more per replayed request.
    private let isPowerOfTwo: Bool
    /// `c`, for a modulus that is not a power of two.
    private let constant: UInt128

    /// The test for `modulus` (at least 1).
    init(modulus: UInt64) {
        self.modulus = max(1, modulus)
        isPowerOfTwo = self.modulus.nonzeroBitCount == 1
        mask = self.modulus &- 1
        constant = isPowerOfTwo ? 0 : UInt128.max / UInt128(self.modulus) + 1
    }

    @inline(__always)
    func isMultiple(_ n: UInt64) -> Bool {
        isPowerOfTwo ? n & mask == 0 : UInt128(n) &* constant < constant
    }
}
