import DiskTestSupport
import Dispatch
import Foundation
import Testing
@_spi(TierCacheInternals) import TierCache

@testable import TierCacheLMDB

/// What the tests' commit function saw, in order. (`Locked`, not `Mutex`: ThreadSanitizer cannot
/// see a `Mutex` on Linux; see scripts/tsan.)
private final class CommitLog: Sendable {
    private let state = Locked<(batches: [[Int]], committed: Set<Int>)>(([], []))
    /// Writes whose number is in it fail, alone.
    let failing: Set<Int>
    /// Signalled when the first batch starts committing, which then waits for `release`.
    let firstBatchStarted = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)

    init(failing: Set<Int> = []) { self.failing = failing }

    var batches: [[Int]] { state.withLock { $0.batches } }

    func isCommitted(_ write: Int) -> Bool { state.withLock { $0.committed.contains(write) } }

    func commit(_ batch: [Int]) -> [Result<Void, any Error>] {
        let isFirst = state.withLock { state -> Bool in
            state.batches.append(batch)
            return state.batches.count == 1
        }
        if isFirst {
            firstBatchStarted.signal()
            release.wait()
        }
        state.withLock { $0.committed.formUnion(batch) }
        return batch.map { failing.contains($0) ? .failure(WriteFailed(write: $0)) : .success(()) }
    }
}

private struct WriteFailed: Error, Equatable {
    let write: Int
}

@Suite("Group commit")
struct GroupCommitTests {
    /// Write 0 leads a commit that waits; writes 1...followers queue behind it; then the commit is
    /// released. Returns each write's outcome (nil: returned normally) and whether its batch had
    /// committed when its call returned.
    private func run(
        followers: Int, maxBatchCount: Int = 256, maxBatchBytes: Int = 1 << 20, bytes: Int = 1, log: CommitLog
    ) throws -> [(error: WriteFailed?, committedBeforeReturn: Bool)] {
        let allQueued = DispatchSemaphore(value: 0)
        let group = GroupCommit<Int>(maxBatchCount: maxBatchCount, maxBatchBytes: maxBatchBytes) { queued in
            if queued == followers { allQueued.signal() }
        }
        let outcomes = Locked(
            [(error: WriteFailed?, committedBeforeReturn: Bool)](repeating: (nil, false), count: followers + 1))
        let done = DispatchGroup()
        func start(_ write: Int) {
            done.enter()
            Thread {
                var failure: WriteFailed?
                do {
                    try group.submit(write, bytes: bytes) { log.commit($0) }
                } catch let error as WriteFailed {
                    failure = error
                } catch {
                    Issue.record("unexpected error \(error)")
                }
                let committed = log.isCommitted(write)
                outcomes.withLock { $0[write] = (failure, committed) }
                done.leave()
            }.start()
        }
        start(0)
        try #require(log.firstBatchStarted.wait(timeout: .now() + 60) == .success)
        for write in 1...followers { start(write) }
        try #require(allQueued.wait(timeout: .now() + 60) == .success)
        log.release.signal()
        try #require(done.wait(timeout: .now() + 60) == .success)
        return outcomes.withLock { $0 }
    }

    @Test("Writes arriving during a commit are committed together in the next, and each returns only after its commit")
    func writersJoinTheNextCommit() throws {
        let log = CommitLog()
        let outcomes = try run(followers: 15, log: log)
        #expect(log.batches.count == 2)
        #expect(log.batches.first == [0])
        #expect(log.batches.last.map { Set($0) } == Set(1...15))
        #expect(outcomes.allSatisfy { $0.error == nil && $0.committedBeforeReturn })
    }

    @Test("Batches keep to the count and byte bounds; the queue is served oldest first")
    func batchesAreBounded() throws {
        let byCount = CommitLog()
        _ = try run(followers: 15, maxBatchCount: 4, log: byCount)
        #expect(byCount.batches.map(\.count) == [1, 4, 4, 4, 3])
        #expect(Set(byCount.batches.dropFirst().flatMap { $0 }) == Set(1...15))

        // 100-byte writes, 250 bytes a batch: two to a batch.
        let byBytes = CommitLog()
        _ = try run(followers: 5, maxBatchBytes: 250, bytes: 100, log: byBytes)
        #expect(byBytes.batches.map(\.count) == [1, 2, 2, 1])
    }

    @Test("A write larger than the byte bound still goes, alone")
    func oversizedWriteGoesAlone() throws {
        let log = CommitLog()
        _ = try run(followers: 3, maxBatchBytes: 10, bytes: 100, log: log)
        #expect(log.batches.map(\.count) == [1, 1, 1, 1])
    }

    @Test("A write that fails fails only its own caller")
    func failuresStayWithTheirWrite() throws {
        let log = CommitLog(failing: [7])
        let outcomes = try run(followers: 15, log: log)
        #expect(outcomes[7].error == WriteFailed(write: 7))
        #expect(outcomes.enumerated().allSatisfy { $0.offset == 7 || $0.element.error == nil })
    }

    /// Submits `write` on a thread of its own; `done` is left when it returns.
    private func submitOnThread(_ group: GroupCommit<Int>, _ write: Int, log: CommitLog, done: DispatchGroup) {
        done.enter()
        Thread {
            do {
                try group.submit(write, bytes: 1) { log.commit($0) }
            } catch {
                Issue.record("unexpected error \(error)")
            }
            done.leave()
        }.start()
    }

    @Test("A leader waits for a writer that announced itself, and commits both together")
    func leaderGathersAnnouncedWriters() throws {
        let log = CommitLog()
        log.release.signal()  // the first batch commits at once
        let leaderQueued = DispatchSemaphore(value: 0)
        let group = GroupCommit<Int>(maxGatherDelay: .seconds(600)) { queued in
            if queued == 1 { leaderQueued.signal() }
        }
        group.enter()  // write 2, still being prepared
        group.enter()  // write 1, the leader
        let done = DispatchGroup()
        submitOnThread(group, 1, log: log, done: done)
        try #require(leaderQueued.wait(timeout: .now() + 60) == .success)
        submitOnThread(group, 2, log: log, done: done)
        try #require(done.wait(timeout: .now() + 60) == .success)
        group.exit()
        group.exit()
        #expect(log.batches == [[1, 2]])
    }

    @Test(
        "A gathering leader is woken when the writer it waits for leaves without writing, not at the end of its delay")
    func leaderIsWokenWhenAnAnnouncedWriterLeaves() throws {
        let log = CommitLog()
        log.release.signal()
        let leaderQueued = DispatchSemaphore(value: 0)
        // A delay far beyond the wait below: only the writer's leaving can end the gathering in time.
        let group = GroupCommit<Int>(maxGatherDelay: .seconds(600)) { queued in
            if queued == 1 { leaderQueued.signal() }
        }
        group.enter()  // a writer that will give up (its entry refused, say)
        group.enter()  // write 1, the leader
        let done = DispatchGroup()
        submitOnThread(group, 1, log: log, done: done)
        try #require(leaderQueued.wait(timeout: .now() + 60) == .success)
        group.exit()
        try #require(done.wait(timeout: .now() + 60) == .success)
        group.exit()
        #expect(log.batches == [[1]])
    }

    @Test("A gathering leader is woken when its batch is full, without waiting for the writers beyond it")
    func leaderIsWokenWhenTheBatchIsFull() throws {
        let log = CommitLog()
        log.release.signal()
        let leaderQueued = DispatchSemaphore(value: 0)
        let group = GroupCommit<Int>(maxBatchCount: 2, maxGatherDelay: .seconds(600)) { queued in
            if queued == 1 { leaderQueued.signal() }
        }
        for _ in 0..<3 { group.enter() }  // the leader, write 2, and a third that never comes
        let done = DispatchGroup()
        submitOnThread(group, 1, log: log, done: done)
        try #require(leaderQueued.wait(timeout: .now() + 60) == .success)
        submitOnThread(group, 2, log: log, done: done)
        try #require(done.wait(timeout: .now() + 60) == .success)
        for _ in 0..<3 { group.exit() }
        #expect(log.batches == [[1, 2]])
    }

    @Test("Gathering is bounded: a writer that announced itself and never comes delays a commit by at most the delay")
    func gatheringIsBounded() throws {
        let log = CommitLog()
        log.release.signal()
        let group = GroupCommit<Int>(maxGatherDelay: .milliseconds(5))
        group.enter()  // announced, never submitted
        group.enter()
        let done = DispatchGroup()
        submitOnThread(group, 1, log: log, done: done)
        // Far beyond the delay: a leader waiting without bound would miss it.
        try #require(done.wait(timeout: .now() + 60) == .success)
        group.exit()
        group.exit()
        #expect(log.batches == [[1]])
    }

    @Test("A lone writer that announced itself is not made to wait")
    func loneWriterDoesNotWait() throws {
        let log = CommitLog()
        log.release.signal()
        let group = GroupCommit<Int>(maxGatherDelay: .seconds(600))
        group.enter()
        let done = DispatchGroup()
        submitOnThread(group, 1, log: log, done: done)
        try #require(done.wait(timeout: .now() + 60) == .success)
        group.exit()
        #expect(log.batches == [[1]])
    }

    @Test("A commit function that returns too few results fails the writes it left out, without trapping")
    func missingResultsAreErrors() throws {
        let group = GroupCommit<Int>()
        #expect(throws: GroupCommitError.self) {
            try group.submit(1, bytes: 1) { _ in [] }
        }
    }
}
