#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Joins concurrent writes into one transaction, so that one commit (and its `fsync`) makes many
/// callers' writes durable at once.
///
/// Each caller queues its write and blocks until the transaction holding it has committed, so
/// the guarantee of a lone write is unchanged: when ``submit(_:bytes:commit:)`` returns, the
/// write is on disk (as far as the tier's `Durability` puts it there), and a process killed at
/// any point loses no write whose caller has returned.
///
/// A caller that finds no commit running leads the next one, with everything queued by then (at
/// most ``maxBatchCount`` writes and ``maxBatchBytes`` bytes; a single write larger than that
/// goes alone). Callers that arrive while a commit runs queue up, and one of them leads the next
/// commit as soon as it ends.
///
/// Left at that, batches alternate between two halves of the writers (those queued during a
/// commit, and those whose commit just ended and who are still coming back), and each commit
/// carries half of them. So a leader gathers: callers announce themselves with ``enter()`` when
/// they start preparing a write (compressing it, before they can queue it) and leave with
/// ``exit()`` when they are done; while more callers are inside than are queued, the leader waits
/// for them, at most ``maxGatherDelay`` (and only while its batch has room). A lone writer is
/// never made to wait: it is the only caller inside, and it is queued.
///
/// This is the group commit of database logs (DeWitt et al., "Implementation techniques for
/// main memory database systems", SIGMOD 1984), with the gathering delay bounded as in
/// PostgreSQL's `commit_delay`, but waiting only for writers known to be on their way.
///
/// `@unchecked Sendable`: the queue, the counts and the flag are read and written only while
/// holding `mutex`; a ticket's result is written by the leader under it and read by its owner
/// under it. The writes themselves cross from their writers' threads to the leader's, so they
/// must be `Sendable`.
final class GroupCommit<Write: Sendable>: @unchecked Sendable {
    /// The most writes in one transaction: enough for every thread of a busy server, few enough
    /// that a transaction's dirty pages stay small.
    let maxBatchCount: Int
    /// The most bytes of writes in one transaction (a batch always takes at least one write).
    let maxBatchBytes: Int
    /// The longest a leader waits for announced writers to queue.
    let maxGatherDelay: Duration

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Callers waiting for their result, or for a commit to end so that one of them can lead.
    private let finished = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// The leader, gathering: a writer queued or left.
    private let arrived = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var queue: [Ticket] = []
    private var isCommitting = false
    private var isGathering = false
    private var inside = 0

    /// Called holding the lock after each write joins the queue, with the number queued (not
    /// counting a batch being committed): lets tests know when writers are waiting, without sleeping.
    private let onQueued: (@Sendable (_ queued: Int) -> Void)?

    private final class Ticket {
        let write: Write
        let bytes: Int
        var result: Result<Void, any Error>?
        init(_ write: Write, bytes: Int) {
            self.write = write
            self.bytes = bytes
        }
    }

    init(
        maxBatchCount: Int = 256, maxBatchBytes: Int = 16 << 20, maxGatherDelay: Duration = .microseconds(500),
        onQueued: (@Sendable (_ queued: Int) -> Void)? = nil
    ) {
        self.maxBatchCount = max(1, maxBatchCount)
        self.maxBatchBytes = maxBatchBytes
        self.maxGatherDelay = maxGatherDelay
        self.onQueued = onQueued
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(finished, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if !canImport(Darwin)
        // Deadlines on the monotonic clock: a wall-clock step must not stretch a gathering wait.
        // (Darwin's condition variables have no clock attribute; there the wait is relative.)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        pthread_cond_init(arrived, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(arrived)
        pthread_cond_destroy(finished)
        pthread_mutex_destroy(mutex)
        arrived.deallocate()
        finished.deallocate()
        mutex.deallocate()
    }

    /// Announces a write on its way: a leader may wait for it (see the type's discussion). Every
    /// `enter()` must be matched by one ``exit()``, whether the write is submitted or not.
    func enter() {
        pthread_mutex_lock(mutex)
        inside += 1
        pthread_mutex_unlock(mutex)
    }

    /// Ends what ``enter()`` announced.
    func exit() {
        pthread_mutex_lock(mutex)
        inside -= 1
        if isGathering && gatheringIsOver { pthread_cond_signal(arrived) }
        pthread_mutex_unlock(mutex)
    }

    /// Queues `write` and returns once a transaction holding it has committed; throws what
    /// writing it threw.
    ///
    /// - Parameters:
    ///   - bytes: the write's size, for ``maxBatchBytes``.
    ///   - commit: writes a batch in one transaction (or, after a failure, as it must) and returns
    ///     each write's result, in order. Whichever caller leads a commit runs its own `commit`,
    ///     one thread at a time; every caller must pass the same behaviour.
    func submit(_ write: Write, bytes: Int, commit: ([Write]) -> [Result<Void, any Error>]) throws {
        let ticket = Ticket(write, bytes: bytes)
        pthread_mutex_lock(mutex)
        queue.append(ticket)
        onQueued?(queue.count)
        if isGathering && gatheringIsOver { pthread_cond_signal(arrived) }
        while true {
            if let result = ticket.result {
                pthread_mutex_unlock(mutex)
                return try result.get()
            }
            if isCommitting {
                pthread_cond_wait(finished, mutex)
                continue
            }
            isCommitting = true
            gather()
            let batch = takeBatch()
            pthread_mutex_unlock(mutex)
            let results = commit(batch.map(\.write))
            pthread_mutex_lock(mutex)
            for (index, member) in batch.enumerated() {
                member.result = index < results.count ? results[index] : .failure(GroupCommitError.noResult)
            }
            isCommitting = false
            pthread_cond_broadcast(finished)
        }
    }

    /// Whether a gathering leader has nothing more to wait for: every announced writer is queued,
    /// or the batch is full. Called holding the lock. Writers wake the leader only when this
    /// becomes true, not at each arrival (queueing, and leaving): waking it at each cost up to two
    /// futex calls and two context switches of the leader a store, for it to find it must wait
    /// on. With 16 writers, waking it once cut the process's CPU a store by about a seventh
    /// (`Benchmarks/GroupCommitProbe`: 50 to about 40 µs).
    private var gatheringIsOver: Bool {
        inside <= queue.count || queue.count >= maxBatchCount
    }

    /// Waits, holding the lock between waits, while announced writers are not yet queued and the
    /// batch has room, at most ``maxGatherDelay``.
    private func gather() {
        guard !gatheringIsOver, maxGatherDelay > .zero else { return }
        let deadline = Self.deadline(after: maxGatherDelay)
        isGathering = true
        defer { isGathering = false }
        while !gatheringIsOver {
            var until = deadline
            if pthread_cond_timedwait(arrived, mutex, &until) == ETIMEDOUT { return }
        }
    }

    /// The oldest queued writes within the batch bounds, removed from the queue. Called holding
    /// the lock, with the queue not empty.
    private func takeBatch() -> [Ticket] {
        var count = 0, bytes = 0
        for ticket in queue {
            let next = ticket.bytes
            if count > 0 && (count == maxBatchCount || bytes + next > maxBatchBytes) { break }
            count += 1
            bytes += next
        }
        let batch = Array(queue.prefix(count))
        queue.removeFirst(count)
        return batch
    }

    /// The `timespec` for `pthread_cond_timedwait`, `delay` from now on the condition's clock.
    private static func deadline(after delay: Duration) -> timespec {
        var now = timespec()
        #if canImport(Darwin)
        clock_gettime(CLOCK_REALTIME, &now)
        #else
        clock_gettime(CLOCK_MONOTONIC, &now)
        #endif
        let (seconds, attoseconds) = delay.components
        var nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
        var wholeSeconds = Int(now.tv_sec) + Int(seconds)
        if nanoseconds >= 1_000_000_000 {
            wholeSeconds += 1
            nanoseconds -= 1_000_000_000
        }
        return timespec(tv_sec: wholeSeconds, tv_nsec: nanoseconds)
    }
}

/// A commit function that returned fewer results than writes: a programming error, reported
/// to the caller rather than trapped on.
struct GroupCommitError: Error {
    static let noResult = GroupCommitError()
}
