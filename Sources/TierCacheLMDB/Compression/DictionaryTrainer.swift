@_spi(TierCacheInternals) import TierCache

/// Decides when a tier trains a dictionary, and keeps the samples to train it on.
///
/// Samples are the small values most recently stored, up to ``LMDBTier/DictionaryTraining/sampleBytes``
/// (a ring: the newest replace the oldest), so a dictionary trained later learns what the
/// responses look like now. Training is due when the ring has filled since the last attempt and
/// either there is no dictionary yet, or the values compressed with the current one in the last
/// window (a ring's worth of bytes; windows follow one another) compressed less than
/// ``LMDBTier/DictionaryTraining/retrainBelow`` of what it achieved on its own samples. One
/// training runs at a time.
final class DictionaryTrainer: Sendable {
    private struct State {
        var samples: [[UInt8]] = []
        var start = 0
        var bytes = 0
        /// Sample bytes offered since the last training attempt.
        var freshBytes = 0
        var isTraining = false
        /// The current dictionary's ratio on its samples, and the bytes compressed with it since.
        var trainedRatio: Double?
        var windowOriginal = 0
        var windowCompressed = 0
        /// How many times the samples were forgotten (``forgetSamples()``).
        var forgettings = 0
    }

    let settings: LMDBTier.DictionaryTraining
    private let state = Locked(State())

    init(settings: LMDBTier.DictionaryTraining) {
        self.settings = settings
    }

    /// Notes a stored small value and how it compressed; returns whether training is now due,
    /// in which case the caller must train and then call ``finish(trainedRatio:)``.
    func note(_ value: [UInt8], compressedTo payload: Int, withDictionary: Bool) -> Bool {
        state.withLock { state in
            state.samples.append(value)
            state.bytes += value.count
            state.freshBytes += value.count
            while state.bytes > settings.sampleBytes, state.start < state.samples.count - 1 {
                state.bytes -= state.samples[state.start].count
                state.samples[state.start] = []
                state.start += 1
            }
            if state.start > 1024, state.start * 2 > state.samples.count {
                state.samples.removeFirst(state.start)
                state.start = 0
            }
            if withDictionary {
                state.windowOriginal += value.count
                state.windowCompressed += payload
            }
            guard !state.isTraining, state.freshBytes >= settings.sampleBytes else { return false }
            let due: Bool
            if let trained = state.trainedRatio {
                // Judged a window at a time: the ratio of the last ring's worth of values, so
                // that when it is due the ring holds the values that drifted.
                guard state.windowOriginal >= settings.sampleBytes else { return false }
                let window = Double(state.windowOriginal) / Double(max(1, state.windowCompressed))
                state.windowOriginal = 0
                state.windowCompressed = 0
                due = window < settings.retrainBelow * trained
            } else {
                due = true
            }
            if due { state.isTraining = true }
            return due
        }
    }

    /// Adds a value found in the store at open as a sample (a store reopened by an app that
    /// stores a few responses per launch still gathers a ring).
    func seed(_ value: [UInt8]) {
        state.withLock { state in
            state.samples.append(value)
            state.bytes += value.count
            state.freshBytes += value.count
        }
    }

    /// The samples to train on (a copy), and a mark for ``stillHolds(_:)``.
    func samples() -> (samples: [[UInt8]], mark: Int) {
        state.withLock { (Array($0.samples[$0.start...]), $0.forgettings) }
    }

    /// Whether the samples taken with `mark` have not been forgotten since: a dictionary trained
    /// on forgotten ones is not installed.
    func stillHolds(_ mark: Int) -> Bool { state.withLock { $0.forgettings == mark } }

    /// Forgets the samples, and the current dictionary's ratio (the tier removed every entry, and
    /// the trained dictionaries with them): the next ring of values stored trains anew.
    func forgetSamples() {
        state.withLock { state in
            let forgettings = state.forgettings + 1
            let isTraining = state.isTraining
            state = State()
            state.forgettings = forgettings
            state.isTraining = isTraining
        }
    }

    /// Ends a training: with the new dictionary's ratio on its samples when one was installed,
    /// or `nil` when none was (the next attempt waits for a ring of fresh samples either way).
    func finish(trainedRatio: Double?) {
        state.withLock { state in
            state.isTraining = false
            state.freshBytes = 0
            if let trainedRatio {
                state.trainedRatio = trainedRatio
                state.windowOriginal = 0
                state.windowCompressed = 0
            }
        }
    }

    /// Starts from a dictionary already in the store (opened, or provided). Without a usable
    /// ratio on its samples (an app's dictionary has none) there is nothing to measure drift
    /// against, so the next full ring of samples trains a dictionary of the tier's own, which is
    /// installed only if it compresses them clearly better than no dictionary.
    func adopt(trainedRatio: Double?) {
        state.withLock { $0.trainedRatio = trainedRatio.flatMap { $0.isFinite && $0 > 0 ? $0 : nil } }
    }
}
