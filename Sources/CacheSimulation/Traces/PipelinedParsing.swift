import Dispatch
import Foundation
import Synchronization

extension TraceReader {
    /// ``forEach(while:)`` with the reading, decompression and parsing on a thread of its own:
    /// `body` runs on the caller's thread, on chunks of consecutive requests in order, while the
    /// next ones are parsed. `Trace.load` numbers keys this way: numbering and parsing each take
    /// a good part of a load, and on two cores they overlap instead of adding up.
    ///
    /// Errors are the same as ``forEach(while:)``'s, at the same point: `body` sees every request
    /// before a malformed record, then the error is thrown, unless `body` has returned false by
    /// then. When `body` returns false or throws, parsing stops within a chunk.
    func forEachChunkParsedAhead(
        while body: (UnsafeBufferPointer<TraceRequest>) throws(TraceError) -> Bool
    ) throws(TraceError) {
        let chunks = ParsedRequestChunks()
        let reader = self
        Thread.detachNewThread { chunks.produce(from: reader) }
        try chunks.consume(body)
    }
}

/// A ring of request buffers between one parsing thread (``produce(from:)``) and one consuming
/// thread (``consume(_:)``), each chunk handed over whole.
///
/// `@unchecked Sendable` because both threads touch the raw buffers. It is safe: a slot is written
/// only by the parser, between its `free.wait()` for that slot and its `filled.signal()`, and read
/// only by the consumer, between its `filled.wait()` and its `free.signal()` (or its stop); a
/// semaphore's signal happens before the wait it releases returns, so no slot is ever read and
/// written at once. `parseError` is written before the parser's last `filled.signal()` and read
/// after it. `stopRequested` is atomic.
final class ParsedRequestChunks: @unchecked Sendable {
    /// Requests per chunk: big enough that a hand-over (two semaphore calls) costs nothing beside
    /// parsing them, small enough that the consumer starts almost at once.
    static let chunkCapacity = 1 << 14
    static let slotCount = 4

    private let requests = UnsafeMutablePointer<TraceRequest>.allocate(capacity: chunkCapacity * slotCount)
    private let counts = UnsafeMutablePointer<Int>.allocate(capacity: slotCount)
    private let isLast = UnsafeMutablePointer<Bool>.allocate(capacity: slotCount)
    /// Free slots. Made at 0 and signalled up: libdispatch traps when a semaphore is freed below
    /// the value it was made with, and a finished parse leaves slots taken.
    private let free = DispatchSemaphore(value: 0)
    private let filled = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let stopRequested = Atomic<Bool>(false)
    private var parseError: TraceError?

    init() {
        for _ in 0..<Self.slotCount { free.signal() }
    }

    deinit {
        requests.deallocate()
        counts.deallocate()
        isLast.deallocate()
    }

    /// Parses `reader` into the ring, a chunk at a time; runs on the parsing thread.
    func produce(from reader: TraceReader) {
        var slot = 0
        var count = 0
        free.wait()
        do {
            try reader.forEach(while: { request in
                (requests + slot * Self.chunkCapacity + count).initialize(to: request)
                count += 1
                guard count == Self.chunkCapacity else { return true }
                publish(slot, count: count, last: false)
                slot = (slot + 1) % Self.slotCount
                count = 0
                free.wait()
                return !stopRequested.load(ordering: .relaxed)
            })
        } catch {
            parseError = error
        }
        publish(slot, count: count, last: true)
        finished.signal()
    }

    private func publish(_ slot: Int, count: Int, last: Bool) {
        counts[slot] = count
        isLast[slot] = last
        filled.signal()
    }

    /// Hands every parsed request to `body` in order; runs on the caller's thread. Returns once
    /// the parser has finished (so the ring can be freed), throwing its error if it failed.
    func consume(_ body: (UnsafeBufferPointer<TraceRequest>) throws(TraceError) -> Bool) throws(TraceError) {
        var slot = 0
        while true {
            filled.wait()
            let chunk = UnsafeBufferPointer(start: requests + slot * Self.chunkCapacity, count: counts[slot])
            let last = isLast[slot]
            let wantsMore: Bool
            do {
                wantsMore = try body(chunk)
            } catch {
                stop()
                throw error
            }
            if last {
                finished.wait()
                // An error past the last request `body` wanted is not the caller's: a limited
                // read stops before it, as ``TraceReader/forEach(while:)`` would.
                if wantsMore, let parseError { throw parseError }
                return
            }
            guard wantsMore else { return stop() }
            free.signal()
            slot = (slot + 1) % Self.slotCount
        }
    }

    /// Asks the parser to stop, gives it the slot it may be waiting for, and waits until it has.
    private func stop() {
        stopRequested.store(true, ordering: .relaxed)
        free.signal()
        finished.wait()
    }
}
