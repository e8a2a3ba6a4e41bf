import Foundation
import Histogram
import Synchronization
import TierCache

/// What one task did in one phase.
struct TaskTally: Sendable {
    var reads = 0
    var writes = 0
    var deletes = 0
    var hits = 0
    /// Stores (writes, and read-through stores after misses) the subject did not keep: a tier
    /// refused the entry.
    var refusedStores = 0
    /// Stores a tier of the subject failed (for a tiered cache, counted by the cache, not thrown).
    var failedStores = 0
    var readBytes: UInt64 = 0
    var hitBytes: UInt64 = 0
    /// Where the task stopped: its next stride index.
    var nextStride = 0
    /// Per window of `window` requests (the last one of a phase may hold fewer): reads, hits, and
    /// the requests it holds.
    var windows: [(reads: Int, hits: Int, requests: Int)] = []
    /// The timed requests' latencies; made only in a measured phase (a histogram is a few hundred
    /// KiB to allocate, more than a short warm-up or an ordo-one sample of requests costs).
    var latency: Histogram<UInt64>?
    var failure: String?

    var requests: Int { reads + writes + deletes }

    @inline(__always)
    mutating func count(_ outcome: WriteOutcome) {
        switch outcome {
        case .kept: break
        case .refused: refusedStores += 1
        case .failed: failedStores += 1
        }
    }

    /// Latencies to three significant digits: up to a minute without resizing, and longer ones
    /// by growing the range (they were dropped, a stalled remote tier losing exactly its worst
    /// samples from the count, the tail percentiles and the maximum).
    static func emptyHistogram() -> Histogram<UInt64> {
        var histogram = Histogram<UInt64>(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        histogram.autoResize = true
        return histogram
    }
}

/// One task's loop over its share of the requests: request `t + k·tasks` of the (cycled)
/// sequence for k = `firstStride`, `firstStride + 1`, …, until `limit` requests or for `duration`
/// from the task's own start (a task the machine starts late still runs its full time).
struct TaskLoop: Sendable {
    let driver: SubjectDriver
    let sequence: WorkloadRequests
    let keys: KeyTable
    let task: Int
    let tasks: Int
    /// Whether to time requests and keep the timeline (the measured phase) or not (warm-up).
    let measured: Bool
    /// One measured request in this many is timed (``BenchmarkPlan/latencySampling``).
    let sampling: Int
    let window: Int
    /// Set by the first task that fails, so the others stop too.
    let stop: StopSignal

    func run(firstStride: Int, limit: Int?, duration: Duration?) async -> TaskTally {
        // Specialized per target: a local tier's calls are synchronous inside the loop (no async
        // call per request), as `TieredCache` makes them.
        switch driver {
        case .localTier(let tier): await run(LocalTarget(tier: tier), firstStride, limit, duration)
        case .tiered(let cache, true): await run(LocalTieredTarget(cache: cache), firstStride, limit, duration)
        default: await run(driver, firstStride, limit, duration)
        }
    }

    private func run<Target: RequestTarget>(
        _ target: Target, _ firstStride: Int, _ limit: Int?, _ duration: Duration?
    ) async -> TaskTally {
        var tally = TaskTally()
        if measured { tally.latency = TaskTally.emptyHistogram() }
        let clock = ContinuousClock()
        let deadline = duration.map { clock.now + $0 }
        let objects = sequence.objects
        let sizes = sequence.sizes
        let operations = sequence.operations
        let readThrough = sequence.readThrough
        let length = objects.count
        let keys = self.keys.buffer
        // Request t + k·tasks of the cycled sequence, advanced by addition: no division per request.
        var index = (task + (firstStride % length) * tasks) % length
        let step = tasks % length
        var windowReads = 0
        var windowHits = 0
        var untilTimed = 0
        var untilWindow = window
        var done = 0
        let limit = limit ?? Int.max
        requests: while done < limit {
            // The clock, the stop flag and cancellation are read every 64 requests: often enough
            // to end a duration-bounded (or cancelled) run within microseconds, rarely enough to
            // cost nothing.
            if done & 63 == 0 {
                if stop.isRaised { break }
                if Task.isCancelled {
                    tally.failure = "cancelled"
                    stop.raise()
                    break
                }
                if let deadline, clock.now >= deadline { break }
            }
            let object = objects[index]
            var began: ContinuousClock.Instant?
            if measured {
                if untilTimed == 0 {
                    began = clock.now
                    untilTimed = sampling
                }
                untilTimed -= 1
            }
            do {
                switch operations.isEmpty ? .read : operations[index] {
                case .read:
                    tally.reads += 1
                    windowReads += 1
                    let size = Int(sizes[Int(object)])
                    tally.readBytes &+= UInt64(size)
                    if let found = try await target.get(keys[Int(object)]) {
                        // Every value of an object has its size: another size is another key's
                        // value (or a torn one), and a tier serving those has no hit ratio to
                        // report. (A size compare costs nothing; comparing bytes would cost the
                        // measurement a copy's worth per hit.)
                        guard found == size else {
                            tally.failure =
                                "a read of \(keys[Int(object)]) returned \(found) bytes; every value stored under it has \(size)"
                            stop.raise()
                            break requests
                        }
                        tally.hits += 1
                        windowHits += 1
                        tally.hitBytes &+= UInt64(found)
                    } else if readThrough {
                        tally.count(
                            try await target.set(
                                CacheEntry(value: sequence.value(for: object), storedAt: .now),
                                forKey: keys[Int(object)]))
                    }
                case .write:
                    tally.writes += 1
                    tally.count(
                        try await target.set(
                            CacheEntry(value: sequence.value(for: object), storedAt: .now), forKey: keys[Int(object)]))
                case .delete:
                    tally.deletes += 1
                    try await target.remove(keys[Int(object)])
                }
            } catch {
                tally.failure = String(describing: error)
                stop.raise()
                break
            }
            if let began {
                let elapsed = clock.now - began
                let nanoseconds =
                    elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000
                _ = tally.latency?.record(UInt64(max(0, nanoseconds)))
            }
            if measured {
                untilWindow -= 1
                if untilWindow == 0 {
                    tally.windows.append((windowReads, windowHits, window))
                    windowReads = 0
                    windowHits = 0
                    untilWindow = window
                }
            }
            index += step
            if index >= length { index -= length }
            done += 1
        }
        if measured, untilWindow != window { tally.windows.append((windowReads, windowHits, window - untilWindow)) }
        tally.nextStride = firstStride + done
        return tally
    }
}

/// Raised by the first task of a run that fails, so that the others stop.
final class StopSignal: Sendable {
    private let raised = Atomic<Bool>(false)

    var isRaised: Bool { raised.load(ordering: .relaxed) }

    func raise() {
        raised.store(true, ordering: .relaxed)
    }
}

/// What became of a store, as the loop counts it.
enum WriteOutcome {
    /// Every tier that was to keep the entry kept it.
    case kept
    /// A tier refused it (too large, out of space, not admitted).
    case refused
    /// A tier failed; a tiered cache counts the error instead of throwing it.
    case failed

    init(_ outcome: StoreOutcome) {
        self = outcome.isStored ? .kept : .refused
    }

    init(_ report: TieredCache.StoreReport) {
        var outcome = WriteOutcome.kept
        for (_, tierOutcome) in report.outcomes {
            switch tierOutcome {
            case .stored: continue
            case .refused: outcome = .refused
            case .failed:
                self = .failed
                return
            }
        }
        self = outcome
    }
}

/// What the loop calls: a subject's operations, resolved once per run rather than per request.
protocol RequestTarget: Sendable {
    func get(_ key: CacheKey) async throws -> Int?
    func set(_ entry: CacheEntry, forKey key: CacheKey) async throws -> WriteOutcome
    func remove(_ key: CacheKey) async throws
}

extension SubjectDriver: RequestTarget {}

/// A local tier, called synchronously.
struct LocalTarget: RequestTarget {
    let tier: any LocalCacheTier

    @inline(__always) func get(_ key: CacheKey) throws -> Int? { try tier.entry(forKey: key)?.value.count }
    @inline(__always) func set(_ entry: CacheEntry, forKey key: CacheKey) throws -> WriteOutcome {
        WriteOutcome(try tier.store(entry, forKey: key))
    }
    @inline(__always) func remove(_ key: CacheKey) throws { try tier.removeEntry(forKey: key) }
}

/// A tiered cache of local tiers: lookups never suspend; stores and removals go through the
/// cache's own (asynchronous) paths, as an application's do.
struct LocalTieredTarget: RequestTarget {
    let cache: TieredCache

    @inline(__always) func get(_ key: CacheKey) -> Int? { cache.localEntry(forKey: key)?.entry.value.count }
    func set(_ entry: CacheEntry, forKey key: CacheKey) async -> WriteOutcome {
        WriteOutcome(await cache.store(entry, forKey: key, policy: .allowed))
    }
    func remove(_ key: CacheKey) async throws { try await cache.removeEntry(forKey: key) }
}

/// Every object's key, in a buffer: the loop passes `buffer[object]` to the tier without the
/// retain and release an array element costs around every request (the harness's cost, not the
/// tier's).
///
/// `@unchecked Sendable`: the buffer is written once, in `init`, and only read afterwards (by any
/// number of tasks); `deinit` runs when no task holds the table.
final class KeyTable: @unchecked Sendable {
    let buffer: UnsafeMutableBufferPointer<CacheKey>

    init(_ keys: [CacheKey]) {
        buffer = .allocate(capacity: keys.count)
        _ = buffer.initialize(from: keys)
    }

    deinit {
        buffer.deinitialize()
        buffer.deallocate()
    }
}
