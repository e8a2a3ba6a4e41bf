import CacheSimulation
import TierCache

/// The requests a benchmark sends: synthetic keys (a distribution over a key space, with value
/// sizes) or a trace's requests with the trace's object sizes, under a read/write/delete mix.
///
/// A workload is deterministic: the same seed gives the same requests in every run, so subjects
/// in one run, and runs on two machines, see the same sequence.
public struct Workload: Sendable, CustomStringConvertible {
    /// Where the keys come from.
    public enum Source: Sendable {
        /// `keys` distinct keys under `distribution`, values sized by `sizes`.
        case synthetic(keys: Int, distribution: KeyDistribution, sizes: ValueSizes)
        /// A trace's requests, in order, with its object sizes (those over ``ValueSizes/maximum``
        /// stored at that size, and counted in the ``Workload/description``); traces without
        /// sizes get values of `sizesIfAbsent`.
        case trace(Trace, sizesIfAbsent: ValueSizes = .fixed(4096))
    }

    /// Where the keys come from.
    public var source: Source
    /// The share of reads, writes and deletes (synthetic and trace requests alike).
    public var mix: OperationMix
    /// The seed of every random draw.
    public var seed: UInt64

    /// A workload; by default all reads, through.
    public init(_ source: Source, mix: OperationMix = .readThrough, seed: UInt64 = 42) {
        self.source = source
        self.mix = mix
        self.seed = seed
    }

    /// A Zipf workload over `keys` keys.
    public static func zipf(
        keys: Int, skew: Double = 0.99, sizes: ValueSizes = .uniform(256...4096), mix: OperationMix = .readThrough
    ) -> Workload {
        Workload(.synthetic(keys: keys, distribution: .zipf(skew: skew), sizes: sizes), mix: mix)
    }

    /// The workload in words, for reports.
    public var description: String {
        let keys =
            switch source {
            case .synthetic(let keys, let distribution, let sizes): "\(distribution) over \(keys) keys, values \(sizes)"
            case .trace(let trace, _):
                "trace \(trace.name) (\(trace.requestCount) requests\(trace.hasSizes ? Self.cappedObjects(of: trace) : ""))"
            }
        return mix == .readThrough ? keys : "\(keys); \(mix)"
    }

    /// The objects of a trace stored smaller than the trace says, in words for the description:
    /// values are real bytes, and none is larger than ``ValueSizes/maximum``.
    private static func cappedObjects(of trace: Trace) -> String {
        let capped = trace.objectSizes.reduce(0) { $0 + ($1 > ValueSizes.maximum ? 1 : 0) }
        return capped == 0 ? "" : "; \(capped) objects over \(ValueSizes.maximum) bytes stored at \(ValueSizes.maximum)"
    }

    /// The most keys a synthetic workload has, 2^25 (33,554,432): about 3 GiB of keys, value
    /// sizes and the Zipf sampler's tables before any value is stored. Past it a run was killed
    /// for memory (2 billion keys asked for about 32 GB of sampler tables alone) instead of
    /// refused.
    public static let maximumKeys = 1 << 25

    /// Throws for a workload that cannot run: no keys, an empty trace, bad sizes, shares or skew.
    public func validate() throws(BenchmarkError) {
        try mix.validate()
        switch source {
        case .synthetic(let keys, let distribution, let sizes):
            guard keys > 0, keys <= Self.maximumKeys else {
                throw .invalidWorkload(
                    "a workload needs from 1 to \(Self.maximumKeys) keys (got \(keys)): each key costs about 100 bytes of keys, sizes and sampler tables before any value"
                )
            }
            try distribution.validate(keys: keys)
            try sizes.validate()
        case .trace(let trace, let sizes):
            guard trace.requestCount > 0 else { throw .invalidWorkload("the trace \(trace.name) has no requests") }
            if !trace.hasSizes { try sizes.validate() }
        }
    }

    /// The fewest requests a run bounded by a duration cycles through (``BenchmarkPlan/cycleLength``):
    /// the whole trace, or one request per key.
    var requestsPerCycle: Int {
        switch source {
        case .synthetic(let keys, _, _): keys
        case .trace(let trace, _): trace.requestCount
        }
    }

    /// `length` requests (a trace is cut or repeated to that length), and every object's value
    /// size: what the runner replays, for a harness of your own to replay the same.
    public func requests(length: Int) throws(BenchmarkError) -> WorkloadRequests {
        try validate()
        guard length > 0 else { throw .invalidWorkload("a run needs at least one request") }
        guard length <= RunLength.maximumRequests else {
            throw .invalidWorkload(
                "\(length) requests are more than the \(RunLength.maximumRequests) a run makes up front")
        }
        var random = SplitMix64(seed: seed)
        var objects = [UInt32]()
        objects.reserveCapacity(length)
        let sizes: [UInt32]
        switch source {
        case .synthetic(let keys, let distribution, let valueSizes):
            var sampler = distribution.sampler(keys: keys)
            for _ in 0..<length { objects.append(UInt32(sampler.next(&random))) }
            var sizeRandom = SplitMix64(seed: seed ^ 0x5DEE_CE66)
            sizes = (0..<keys).map { _ in valueSizes.draw(&sizeRandom) }
        case .trace(let trace, let valueSizes):
            while objects.count < length {
                objects.append(contentsOf: trace.requests.prefix(length - objects.count))
            }
            if trace.hasSizes {
                // A zero-byte object in a trace becomes one byte: tiers store values, not absences.
                sizes = trace.objectSizes.map { max(1, min($0, UInt32(ValueSizes.maximum))) }
            } else {
                var sizeRandom = SplitMix64(seed: seed ^ 0x5DEE_CE66)
                sizes = (0..<trace.objectCount).map { _ in valueSizes.draw(&sizeRandom) }
            }
        }
        var operations = [Operation]()
        if mix != .readThrough {
            operations.reserveCapacity(length)
            for _ in 0..<length {
                let draw = random.nextUnit()
                operations.append(draw < mix.reads ? .read : draw < mix.reads + mix.writes ? .write : .delete)
            }
        }
        return WorkloadRequests(objects: objects, operations: operations, readThrough: mix.readThrough, sizes: sizes)
    }
}

/// A workload's requests, ready to replay.
public struct WorkloadRequests: Sendable {
    /// Object ids, in request order.
    public let objects: [UInt32]
    /// Each request's operation; empty when every request is a read.
    let operations: [Operation]
    /// Whether a read that misses stores the value.
    public let readThrough: Bool
    /// Each object's value size.
    public let sizes: [UInt32]

    /// Each object's key, `bench/object/<id>` (made once, so that a run times the tier rather than
    /// string formatting).
    public func keys() throws(BenchmarkError) -> [CacheKey] {
        do {
            return try sizes.indices.map { try CacheKey("bench/object/\($0)") }
        } catch {
            throw .invalidWorkload("cannot make the workload's keys: \(error)")
        }
    }

    /// A compressible, JSON-like value of `object`'s size, cut from a shared pattern.
    public func value(for object: UInt32) -> [UInt8] {
        ValuePattern.value(size: Int(sizes[Int(object)]), seed: object)
    }
}
