import TierCache

/// One side of a measured pair (a subject, or the baseline beside it), open across the plan's
/// rounds: filled and warmed up once, then measured round by round, alternating with the other
/// side, its tallies summed over the rounds.
struct MeasuredSide {
    let driver: SubjectDriver
    let subject: BenchmarkSubject
    let scratch: BenchmarkScratch
    let tasks: Int
    /// Raised by the first task that fails; no round runs after it.
    let stop = StopSignal()
    /// Where each task's next round starts in the workload (each round measures the requests
    /// after the last one's).
    var strides: [Int]
    /// Why filling or warming up failed, if either did.
    var preparationFailure: String?
    var warmUpRequests = 0
    /// The tiers' counters before the first measured round.
    var before: [(tier: String, statistics: TierStatistics)] = []
    /// Each task's tally over the rounds so far.
    var tallies: [TaskTally]
    /// Each round's throughput (requests per second), in order.
    var roundThroughputs: [Double] = []
    /// The measured rounds' time, summed.
    var seconds = 0.0

    init(driver: SubjectDriver, subject: BenchmarkSubject, scratch: BenchmarkScratch, tasks: Int) {
        self.driver = driver
        self.subject = subject
        self.scratch = scratch
        self.tasks = tasks
        strides = Array(repeating: 0, count: tasks)
        tallies = Array(repeating: TaskTally(), count: tasks)
    }

    /// Whether a task failed (or filling did): the side measures no more rounds.
    var hasFailed: Bool { stop.isRaised }

    /// The first failure: filling's, else the first a task met in the warm-up or a round.
    var failure: String? { preparationFailure ?? tallies.lazy.compactMap(\.failure).first }

    /// Adds one round's tallies (one per task) to the rounds before it.
    mutating func add(round: [TaskTally], seconds: Double) {
        let requests = round.reduce(0) { $0 + $1.requests }
        roundThroughputs.append(seconds > 0 ? Double(requests) / seconds : 0)
        self.seconds += seconds
        for task in round.indices {
            tallies[task].add(round[task])
            strides[task] = round[task].nextStride
        }
    }
}

extension TaskTally {
    /// Adds a later phase's tally of the same task: its counters, its timeline's windows after
    /// this one's, its latencies, and its failure if this one had none.
    mutating func add(_ later: TaskTally) {
        reads += later.reads
        writes += later.writes
        deletes += later.deletes
        hits += later.hits
        refusedStores += later.refusedStores
        failedStores += later.failedStores
        readBytes &+= later.readBytes
        hitBytes &+= later.hitBytes
        nextStride = later.nextStride
        windows += later.windows
        if let laterLatency = later.latency {
            if latency == nil { latency = laterLatency } else { latency?.add(laterLatency) }
        }
        failure = failure ?? later.failure
    }
}
