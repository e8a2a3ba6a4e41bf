/// What a benchmark run does to every subject: the workload, how long, how many concurrent
/// tasks, and which baselines join the run.
public struct BenchmarkPlan: Sendable {
    /// The requests.
    public var workload: Workload
    /// The measured phase.
    public var length: RunLength
    /// A phase before the measured one, whose requests fill the subject and are not measured
    /// (its own requests, the ones just before the measured phase's in the workload).
    public var warmUp: RunLength
    /// The concurrency sweep: each subject runs once per entry, with that many tasks (`[1, 2, 4, 8]`).
    public var tasks: [Int]
    /// Whether each subject's baseline (``BenchmarkSubject/Baseline``) runs beside it, at the
    /// subject's capacity, so that every figure has a same-run ratio.
    public var baselines: Bool
    /// How many times the measured phase runs, each subject's rounds alternating with its
    /// baseline's (baseline first in the last round and every second one before it), each round
    /// on the workload's next requests. The throughput ratio is the median of the rounds'
    /// ratios, so that one round disturbed by the machine (another process, a page cache
    /// flushing) does not make the figure; the other figures cover every round. 3 by default; 1
    /// measures each side once.
    public var rounds: Int
    /// How many points the hit-ratio-over-time chart gets (for a run bounded by requests; a run
    /// bounded by duration gets a point every ``timelineWindow`` requests per task, neighbouring
    /// points merged once there are more than twice this many).
    public var timelinePoints: Int
    /// The requests per task in one point of a duration-bounded run's hit-ratio timeline.
    public var timelineWindow: Int
    /// For duration-bounded runs, how many requests the workload generates, at least, and cycles
    /// through: a trace's cycle is a whole number of traces (at least one), and a synthetic
    /// workload's has at least one request per key, so that a long run is not a short prefix of
    /// its workload replayed over and over.
    public var cycleLength: Int
    /// Whether every key is stored before the warm-up, so that reads hit from the start (a
    /// get-hit benchmark: reads only, not through, over a prefilled subject).
    public var prefill: Bool
    /// One measured request in this many is timed for the latency histogram (the first of each
    /// task's, then every `latencySampling`-th). Reading the clock twice costs about 40 ns, a
    /// third of a memory tier's hit: timing every request (1) would be measuring the clock.
    /// Throughput, hits and the timeline count every request whatever the sampling.
    public var latencySampling: Int

    /// A plan; by default 200,000 measured requests in each of three rounds, no warm-up, one
    /// task, with baselines.
    public init(
        workload: Workload, length: RunLength = .requests(200_000), warmUp: RunLength = .requests(0),
        tasks: [Int] = [1], baselines: Bool = true, rounds: Int = 3
    ) {
        self.workload = workload
        self.length = length
        self.warmUp = warmUp
        self.tasks = tasks
        self.baselines = baselines
        self.rounds = rounds
        self.timelinePoints = 50
        self.timelineWindow = 10_000
        self.cycleLength = 1 << 20
        self.prefill = false
        self.latencySampling = 8
    }

    /// The most tasks a plan may ask for.
    public static let maximumTasks = 1024
    /// The most rounds a plan may ask for.
    public static let maximumRounds = 1000
    /// The most points a plan's hit-ratio timeline may have.
    public static let maximumTimelinePoints = 100_000

    /// Throws for a plan that cannot run.
    public func validate() throws(BenchmarkError) {
        try workload.validate()
        try length.validate("the measured phase")
        try warmUp.validate("the warm-up")
        if case .requests(let count) = length, count == 0 {
            throw .invalidWorkload("the measured phase needs at least one request")
        }
        if case .duration(let duration) = length, duration == .zero {
            throw .invalidWorkload("the measured phase needs a positive duration")
        }
        guard (1...Self.maximumRounds).contains(rounds) else {
            throw .invalidWorkload("rounds must be from 1 to \(Self.maximumRounds) (got \(rounds))")
        }
        // The rounds' requests are made up front, as one phase's are.
        if case .requests(let count) = length, count > RunLength.maximumRequests / rounds {
            throw .invalidWorkload(
                "\(rounds) rounds of \(count) requests pass the \(RunLength.maximumRequests) made up front; run fewer rounds, fewer requests, or for a duration"
            )
        }
        guard !tasks.isEmpty, tasks.allSatisfy({ (1...Self.maximumTasks).contains($0) }) else {
            throw .invalidWorkload("task counts must be from 1 to \(Self.maximumTasks) (got \(tasks))")
        }
        guard timelinePoints > 0, timelineWindow > 0, cycleLength > 0, latencySampling > 0 else {
            throw .invalidWorkload(
                "timeline points, timeline window, cycle length and latency sampling must be positive")
        }
        // Unbounded, a cycle overflowed the sequence's length (or asked for its whole memory up
        // front), and a timeline's points trapped once the run had finished.
        guard cycleLength <= RunLength.maximumRequests else {
            throw .invalidWorkload(
                "the cycle length must be at most \(RunLength.maximumRequests) requests, made up front (got \(cycleLength))"
            )
        }
        guard timelinePoints <= Self.maximumTimelinePoints else {
            throw .invalidWorkload(
                "timeline points must be at most \(Self.maximumTimelinePoints) (got \(timelinePoints))")
        }
        // Each part is bounded above, so the sum cannot wrap; together they were only refused
        // when the runner made them, after a trace had been loaded.
        guard sequenceLength <= RunLength.maximumRequests else {
            throw .invalidWorkload(
                "the warm-up and the measured rounds make \(sequenceLength) requests up front, more than the "
                    + "\(RunLength.maximumRequests) a run makes; warm up or measure for fewer requests, or for a duration"
            )
        }
    }

    /// How many requests the workload generates: the warm-up and every round when they are
    /// counted, else a cycle (``cycleLength``). A plan that passed ``validate()`` cannot overflow
    /// the sums: a counted warm-up, and the rounds of a counted measured phase together, are at
    /// most ``RunLength/maximumRequests`` each, a cycle at most a trace's or a key space's length.
    ///
    /// A run bounded by a duration wraps at the sequence's end (each phase starting where the
    /// last ended), so a trace's sequence is the cycle rounded up to whole traces, both phases
    /// replaying it: a partial trace at the end (a 100,000-request trace in a cycle of 2^20)
    /// gave the trace's first requests one more turn per cycle than the rest, and jumped back to
    /// the start mid-trace.
    var sequenceLength: Int {
        let cycle = max(cycleLength, workload.requestsPerCycle)
        if case .trace(let trace, _) = workload.source, trace.requestCount > 0 {
            if case .requests(let warm) = warmUp, case .requests(let measured) = length {
                return warm + rounds * measured
            }
            return (cycle + trace.requestCount - 1) / trace.requestCount * trace.requestCount
        }
        return switch (warmUp, length) {
        case (.requests(let warm), .requests(let measured)): warm + rounds * measured
        case (.requests(let warm), .duration): warm + cycle
        case (.duration, .requests(let measured)): cycle + rounds * measured
        case (.duration, .duration): cycle
        }
    }
}
