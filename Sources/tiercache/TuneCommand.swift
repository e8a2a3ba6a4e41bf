import ArgumentParser
import CacheSimulation
import Foundation
import TierCache

/// `tiercache tune`: miss-ratio curves and the capacity each policy needs for a target hit ratio.
struct TuneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tune",
        abstract: "Find the capacity that reaches a target hit ratio, per policy, from a trace.",
        discussion: """
            LRU's curve is exact (one pass over stack distances); --sample-rate or --sample-size adds a SHARDS estimate \
            and reports its error. Other policies' curves come from miniature simulations (sampled, scaled-down \
            replays; --full-replays for full ones) at a logarithmic grid of capacities on every core, and each \
            crossing of the target is then bisected with full replays to within 1%.
            """)

    @OptionGroup var traceOptions: TraceOptions

    @Option(help: "The hit ratio to reach, 0 to 1.")
    var targetHitRatio = 0.9

    @Option(help: "Policies to compare with LRU's exact curve, comma-separated (\"none\" for LRU only).")
    var policy = "s3-fifo,arc,w-tinylfu"

    @Option(help: "What a capacity counts: objects or bytes.")
    var unit: CapacityUnit = .objects

    @Option(help: "Capacities on the replay grid (log-spaced from 0.1% to 100% of the footprint; 16 by default).")
    var gridPoints: Int?

    @Option(help: "Also estimate LRU's curve with fixed-rate SHARDS at this sampling rate (e.g. 0.01).")
    var sampleRate: Double?

    @Option(help: "Also estimate LRU's curve with fixed-size SHARDS tracking at most this many keys.")
    var sampleSize: Int?

    @Flag(help: "Draw the other policies' curves from full replays instead of miniature simulations.")
    var fullReplays = false

    @Option(help: "The miniature simulations' lowest sampling rate (0 to 1; 1% by default).")
    var miniatureRate: Double?

    @Option(
        help:
            "The fewest objects a miniature simulation's scaled cache holds; smaller capacities are sampled at higher rates."
    )
    var miniatureMinimumObjects: Double?

    /// The miniature simulations' settings, the defaults where not given.
    private var miniatureOptions: MiniatureSimulation.Options {
        let defaults = MiniatureSimulation.Options()
        return .init(
            rate: miniatureRate ?? defaults.rate,
            minimumScaledObjects: miniatureMinimumObjects ?? defaults.minimumScaledObjects)
    }

    @Flag(help: "Also replay the full grid and report each miniature curve's mean absolute error against it.")
    var compareWithFullReplays = false

    @Flag(
        help:
            "Keep every point of every curve in the report (otherwise at most 2,000 log-spaced points per curve plus crossings and knees)."
    )
    var fullCurves = false

    @Option(
        help: ArgumentHelp(
            "Bytes to add to every object's size (with --unit bytes): what a memory tier charges an entry beyond its value.",
            discussion:
                "MemoryTier charges each entry its key's UTF-8 length plus 64 bytes beyond the value, so with values of a trace and keys of about 40 bytes, --entry-overhead 104 makes the recommended capacity the one to give MemoryTier(capacity:)."
        ))
    var entryOverhead: UInt32 = 0

    @Option(help: "Replays to run at once (default: one per core this process may use).")
    var jobs: Int?

    @OptionGroup var reportOptions: ReportOptions

    func validate() throws {
        if let jobs, jobs <= 0 { throw ValidationError("--jobs must be positive") }
        guard targetHitRatio > 0, targetHitRatio <= 1 else {
            throw ValidationError("--target-hit-ratio must be in (0, 1]")
        }
        if let gridPoints, !(2...200).contains(gridPoints) {
            throw ValidationError("--grid-points must be from 2 to 200")
        }
        // Below SHARDS' smallest rate the sample was drawn at that rate, and the report named
        // the rate asked for.
        if let sampleRate, !(sampleRate >= SHARDS.smallestRate && sampleRate <= 1) {
            throw ValidationError("--sample-rate must be from 2^-24 (\(SHARDS.smallestRate)) to 1")
        }
        if let sampleSize, sampleSize < 16 { throw ValidationError("--sample-size must be at least 16") }
        if sampleRate != nil, sampleSize != nil {
            throw ValidationError("use --sample-rate or --sample-size, not both")
        }
        let miniatures = miniatureOptions
        guard miniatures.rate >= SHARDS.smallestRate, miniatures.rate <= 1 else {
            throw ValidationError("--miniature-rate must be in (0, 1], from 2^-24 (\(SHARDS.smallestRate))")
        }
        let largestMinimum = MiniatureSimulation.Options.largestMinimumScaledObjects
        guard miniatures.minimumScaledObjects >= 1, miniatures.minimumScaledObjects <= largestMinimum else {
            throw ValidationError(
                "--miniature-minimum-objects must be from 1 to \(Int(largestMinimum)) (got \(miniatures.minimumScaledObjects))"
            )
        }
        // Full replays draw no miniature: the options were ignored without a word.
        if fullReplays, miniatureRate != nil || miniatureMinimumObjects != nil {
            throw ValidationError(
                "--miniature-rate and --miniature-minimum-objects set the miniatures; drop --full-replays")
        }
        if fullReplays, compareWithFullReplays {
            throw ValidationError("--compare-with-full-replays compares miniature curves; drop --full-replays")
        }
        let policies = policy == "none" ? [] : try SimulateCommand.policies(policy)
        // LRU's curve is exact (stack distances): with no other policy, nothing is replayed, and
        // the options that set how replayed curves are drawn were ignored without a word.
        if !policies.contains(where: { $0 != .lru }),
            fullReplays || compareWithFullReplays || miniatureRate != nil || miniatureMinimumObjects != nil
                || gridPoints != nil || jobs != nil
        {
            throw ValidationError(
                "--full-replays, --compare-with-full-replays, --miniature-rate, --miniature-minimum-objects, --grid-points and --jobs set how other policies' curves are drawn; --policy \(policy) draws LRU's exact curve only"
            )
        }
        if entryOverhead > 0, unit != .bytes {
            throw ValidationError("--entry-overhead adds bytes to sizes: use it with --unit bytes")
        }
    }

    func run() throws {
        let policies = policy == "none" ? [] : try SimulateCommand.policies(policy)
        let trace = try traceOptions.load().addingEntryOverhead(entryOverhead)
        var sampling: SHARDS.Mode?
        if let sampleRate { sampling = .fixedRate(sampleRate) }
        if let sampleSize { sampling = .fixedSize(maximumKeys: sampleSize) }
        var options = CapacityTuner.Options(
            unit: unit, targetHitRatio: targetHitRatio, policies: policies,
            gridPoints: gridPoints ?? 16, sampling: sampling, parallelism: jobs ?? Simulator.defaultParallelism)
        options.fullCurves = fullCurves
        options.curveMethod =
            fullReplays
            ? .fullReplays : .miniature(miniatureOptions)
        options.compareWithFullReplays = compareWithFullReplays
        let tuner = CapacityTuner(options: options)
        let progress = ProgressBar(label: "tuning")
        let start = ContinuousClock.now
        let result: CapacityTuner.Result
        do {
            result = try tuner.tune(trace) { stage, fraction in progress.update(fraction, stage: stage) }
        } catch {
            throw CommandFailure(error.description)
        }
        progress.finish()
        let elapsed = ContinuousClock.now - start
        let report = Report.tuning(
            trace: trace, result: result,
            seconds: elapsed.inSeconds)
        for (key, value) in report.summary { print("\(key): \(value)") }
        print("")
        print(report.tables[0].text)
        // The sizes count what the tier charges only with --entry-overhead (a trace gives no
        // keys): without it, a line would name a capacity holding fewer entries than the
        // simulation did, and missing the target.
        let largestEntry = UInt64(trace.objectSizes.max() ?? 0)
        if let line = Self.memoryTierLine(result, entryOverhead: entryOverhead, largestEntry: largestEntry) {
            print("\n" + line)
        }
        try reportOptions.write(report, baseName: "tune-" + SimulateCommand.baseName(trace.name))
    }

    /// In byte mode, the memory tier that reaches the target with the least capacity, as one line
    /// of Swift (admitting `largestEntry`, the trace's largest object); without an entry overhead,
    /// what to give for it.
    static func memoryTierLine(_ result: CapacityTuner.Result, entryOverhead: UInt32, largestEntry: UInt64) -> String? {
        guard result.unit == .bytes else { return nil }
        guard entryOverhead > 0 else {
            return "Memory tier: give --entry-overhead for the line that configures it (MemoryTier charges each "
                + "entry its key's UTF-8 length and \(MemoryTier.perEntryOverhead) bytes beyond its value: 104 for "
                + "keys of about 40 bytes); the capacities above count values alone"
        }
        let candidates = result.curves.compactMap { curve -> (PolicyKind, UInt64)? in
            guard let kind = PolicyKind.allCases.first(where: { $0.displayName == curve.policy }),
                kind.memoryTierPolicy != nil,
                let capacity = curve.capacityForTarget
            else { return nil }
            return (kind, capacity)
        }
        guard let (kind, capacity) = candidates.min(by: { $0.1 < $1.1 }),
            let line = kind.memoryTierConfiguration(capacityBytes: capacity, largestEntry: largestEntry)
        else { return nil }
        return "Memory tier: \(line) (with \(entryOverhead) bytes an entry beyond its value)"
    }
}
