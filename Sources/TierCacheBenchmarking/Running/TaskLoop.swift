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
    var readBytes: UInt64 = 0
    var hitBytes: UInt64 = 0
    /// Where the task stopped: its next stride index.
    var nextStride = 0
    /// Per window of `window` requests: reads and hits.
    var windows: [(reads: Int, hits: Int)] = []
    var latency = TaskTally.emptyHistogram()
    var failure: String?

    var requests: Int { reads + writes + deletes }

    /// Latencies up to a minute, to three significant digits.
    static func emptyHistogram() -> Histogram<UInt64> {
        Histogram(highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
    }
}

/// One task's loop over its share of the requests: request `t + k·tasks` of the (cycled)
/// sequence for k = `firstStride`, `firstStride + 1`, …, until `limit` requests or `deadline`.
struct TaskLoop: Sendable {
    let driver: SubjectDriver
    let sequence: RequestSequence
    let keys: [CacheKey]
    let task: Int
    let tasks: Int
    /// Whether to time requests and keep the timeline (the measured phase) or not (warm-up).
    let measured: Bool
    let window: Int
    /// Set by the first task that fails, so the others stop too.
    let stop: StopSignal

    func run(firstStride: Int, limit: Int?, deadline: ContinuousClock.Instant?) async -> TaskTally {
        var tally = TaskTally()
        let clock = ContinuousClock()
        let length = sequence.objects.count
        var stride = firstStride
        var windowReads = 0
        var windowHits = 0
        var done = 0
        while limit.map({ done < $0 }) ?? true {
            // The clock and the stop flag are read every 64 requests: often enough to end a
            // duration-bounded run within microseconds, rarely enough to cost nothing.
            if done & 63 == 0 {
                if stop.isRaised { break }
                if let deadline, clock.now >= deadline { break }
            }
            let index = (task + stride * tasks) % length
            let object = sequence.objects[index]
            let key = keys[Int(object)]
            let began = measured ? clock.now : nil
            do {
                switch sequence.operation(at: index) {
                case .read:
                    tally.reads += 1
                    windowReads += 1
                    let size = UInt64(sequence.sizes[Int(object)])
                    tally.readBytes &+= size
                    if let found = try await driver.get(key) {
                        tally.hits += 1
                        windowHits += 1
                        tally.hitBytes &+= UInt64(found)
                    } else if sequence.readThrough {
                        try await driver.set(
                            CacheEntry(value: sequence.value(for: object), storedAt: .now), forKey: key)
                    }
                case .write:
                    tally.writes += 1
                    try await driver.set(CacheEntry(value: sequence.value(for: object), storedAt: .now), forKey: key)
                case .delete:
                    tally.deletes += 1
                    try await driver.remove(key)
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
                _ = tally.latency.record(UInt64(max(0, nanoseconds)))
                if (done + 1) % window == 0 {
                    tally.windows.append((windowReads, windowHits))
                    windowReads = 0
                    windowHits = 0
                }
            }
            stride += 1
            done += 1
        }
        if measured, done % window != 0 { tally.windows.append((windowReads, windowHits)) }
        tally.nextStride = stride
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
