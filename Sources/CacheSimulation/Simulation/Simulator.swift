import Dispatch
import Synchronization
@_spi(TierCacheInternals) import TierCache

/// Replays a loaded ``Trace`` through eviction policies.
///
/// ```swift
/// let trace = try Trace.load(TraceReader(path: "OLTP.lis.zst"))
/// let simulator = try Simulator(trace: trace, unit: .objects)
/// let lru = simulator.replay(.lru, capacity: 1000)
/// print(lru.hitRatio)
/// ```
///
/// A grid of replays (``replay(policies:capacities:parallelism:progress:)``) runs on every core:
/// each replay is independent and reads the shared trace without copying it.
public struct Simulator: Sendable {
    /// The trace every replay reads.
    public let trace: Trace
    /// Whether capacities count objects or bytes.
    public let unit: CapacityUnit
    private let sizes: [UInt32]
    private let future: FutureIndex

    /// A byte-mode simulation of a trace without object sizes.
    public struct UnitError: Error, Sendable, CustomStringConvertible {
        /// The trace's name.
        public let trace: String
        /// What is wrong and what to do instead.
        public var description: String {
            "\(trace) has no object sizes, so a simulation in bytes means nothing for it; simulate in objects (`--unit objects`), or use a trace that gives sizes"
        }
    }

    /// A simulator of `trace` in `unit`; bytes need a trace with object sizes.
    public init(trace: Trace, unit: CapacityUnit) throws(UnitError) {
        guard unit == .objects || trace.hasSizes else { throw UnitError(trace: trace.name) }
        self.trace = trace
        self.unit = unit
        self.sizes = unit == .bytes ? trace.objectSizes : [UInt32](repeating: 1, count: trace.objectCount)
        self.future = FutureIndex()
    }

    /// Replays the whole trace through one policy, built-in (`.lru`, `.arc`, …) or yours
    /// (`SimulatedPolicy(LFUPolicy.self)`).
    public func replay(_ policy: SimulatedPolicy, capacity: UInt64) -> SimulationResult {
        // A built-in runs the replay specialized for its type (its requests inlined into the
        // loop); a type of your own runs the generic replay, through its witness table.
        guard let kind = policy.kind else { return replay(policy.type, capacity: capacity) }
        return kind.withType(Replay(simulator: self, capacity: capacity))
    }

    /// The generic replay, of a built-in policy's type.
    private struct Replay: PolicyTypeOperation {
        let simulator: Simulator
        let capacity: UInt64
        func run<Policy: EvictionPolicy>(_ type: Policy.Type) -> SimulationResult {
            simulator.replay(type, capacity: capacity)
        }
    }

    /// How many requests ahead a replay tells the policy what is coming
    /// (``EvictionPolicy/prefetch(_:keyHash:)``): far enough that a miss to main memory is over
    /// by then, near enough that what was loaded is still in the cache.
    /// A power of two, so that the ring of upcoming key hashes is indexed by a mask.
    static let prefetchDistance = 8

    /// Replays the whole trace through any policy type, built-in or yours.
    public func replay<Policy: EvictionPolicy>(_ type: Policy.Type, capacity: UInt64) -> SimulationResult {
        let nextUse = Policy.needsFuture ? future.nextUses(of: trace) : []
        // The simulator keeps no values, so policies need not note what leaves them.
        let context = PolicyContext(
            capacity: capacity, expectedSlots: sizes.count, nextUse: nextUse, readsDepartures: false)
        let start = ContinuousClock.now
        let objectMode = unit == .objects
        // The policy is a local of the loop's closure, not captured by it: a captured variable
        // is reached through a box, and unspecialized code (a policy type of your own) copied the
        // whole policy to call a non-mutating method on it.
        let (hits, hitBytes) = trace.requests.withUnsafeBufferPointer { requests in
            sizes.withUnsafeBufferPointer { sizes in
                var policy = Policy(context: context)
                var hits = 0
                var hitBytes: UInt64 = 0
                let distance = Self.prefetchDistance
                // Each request's key hash, computed once: `distance` requests ahead for its hint,
                // then kept in this ring until its turn (computing it twice cost W-TinyLFU about
                // 10 instructions a request on P12).
                withUnsafeTemporaryAllocation(of: UInt64.self, capacity: distance) { upcomingHashes in
                    if Policy.usesKeyHash {
                        for position in 0..<min(distance, requests.count) {
                            upcomingHashes[position] = TraceKeyHash.of(requests[position])
                        }
                    }
                    for position in 0..<requests.count {
                        let object = requests[position]
                        // Only policies that count keys get a hash: the others skip computing one.
                        let keyHash = Policy.usesKeyHash ? upcomingHashes[position % distance] : 0
                        // The request `distance` ahead: its memory starts loading now, and is
                        // there when its turn comes.
                        if position + distance < requests.count {
                            let upcoming = requests[position + distance]
                            let upcomingHash = Policy.usesKeyHash ? TraceKeyHash.of(upcoming) : 0
                            if Policy.usesKeyHash { upcomingHashes[position % distance] = upcomingHash }
                            policy.prefetch(upcoming, keyHash: upcomingHash)
                        }
                        // In object mode every size is 1: no read of the size array (a cache miss
                        // per request on a trace of millions of objects).
                        let size = objectMode ? 1 : UInt64(sizes[Int(object)])
                        if policy.access(object, size: size, keyHash: keyHash, position: position) {
                            hits += 1
                            hitBytes &+= size
                        }
                    }
                }
                return (hits, hitBytes)
            }
        }
        let elapsed = ContinuousClock.now - start
        let requestedBytes = unit == .bytes ? trace.requestedBytes : UInt64(trace.requestCount)
        return SimulationResult(
            policy: Policy.name, capacity: capacity, unit: unit, requests: trace.requestCount, hits: hits,
            requestedBytes: requestedBytes, hitBytes: unit == .bytes ? hitBytes : UInt64(hits),
            seconds: elapsed.inSeconds)
    }

    /// Replays every (policy, capacity) pair, `parallelism` at a time, and returns the results in
    /// policy-major order. `progress` is called (from any thread) with (finished, total).
    ///
    /// Policies that share a name (a user's LRU named after the built-in, two instances of one
    /// generic policy) are named apart in the results: a built-in keeps its name, the others are
    /// numbered (`LRU (2)`), since reports find a policy's rows and chart line by its name.
    public func replay(
        policies: [SimulatedPolicy], capacities: [UInt64], parallelism: Int = Simulator.defaultParallelism,
        progress: (@Sendable (Int, Int) -> Void)? = nil
    ) -> [SimulationResult] {
        let jobs = policies.flatMap { policy in capacities.map { (policy, $0) } }
        if policies.contains(where: { $0.type.needsFuture }) { _ = future.nextUses(of: trace) }
        let names = DistinctNames.apart(policies.map { $0.type.name }, keeping: policies.map { $0.kind != nil })
        return concurrentMap(count: jobs.count, parallelism: parallelism, progress: progress) { index in
            var result = replay(jobs[index].0, capacity: jobs[index].1)
            result.policy = names[index / capacities.count]
            return result
        }
    }

    /// The number of active processors.
    public static var defaultParallelism: Int { ProcessInfoLite.activeProcessorCount }
}

/// The next-use index Belady needs, computed once per simulator and shared by its replays.
final class FutureIndex: Sendable {
    private let cached = Locked<[UInt32]?>(nil)

    func nextUses(of trace: Trace) -> [UInt32] {
        cached.withLock { cached in
            if let cached { return cached }
            let computed = BeladyPolicy.nextUses(of: trace.requests, objectCount: trace.objectCount)
            cached = computed
            return computed
        }
    }
}

/// `body(0) … body(count - 1)` on up to `parallelism` threads, each taking the next index as it
/// finishes one (replays differ in cost by orders of magnitude, so static shares would leave
/// threads idle); the results in index order. `progress` is called (from any thread) with
/// (finished, count).
func concurrentMap<T: Sendable>(
    count: Int, parallelism: Int, progress: (@Sendable (Int, Int) -> Void)? = nil,
    _ body: @Sendable (Int) -> T
) -> [T] {
    let results = Locked([T?](repeating: nil, count: count))
    let next = Atomic<Int>(0)
    let finished = Atomic<Int>(0)
    DispatchQueue.concurrentPerform(iterations: max(1, min(parallelism, count))) { _ in
        while true {
            let index = next.add(1, ordering: .relaxed).oldValue
            guard index < count else { return }
            let result = body(index)
            results.withLock { $0[index] = result }
            progress?(finished.add(1, ordering: .relaxed).newValue, count)
        }
    }
    return results.withLock { $0.compactMap { $0 } }
}
