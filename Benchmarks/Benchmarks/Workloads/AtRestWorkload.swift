import TierCache
import TierCacheTesting

/// The at-rest measurements' data (AtRestRatios and the "At rest" benchmarks): JSON responses of
/// one size to train on, and others of the same API, never among the samples, to measure.
public struct AtRestWorkload: Sendable {
    /// 3 MiB of responses (at least 1,500) to give a store before measuring: more than the
    /// automatic dictionary's 1 MiB sample ring.
    public let trainingValues: [[UInt8]]
    /// The responses measured, and the keys they are stored under.
    public let values: [[UInt8]]
    public let keys: [CacheKey]

    public init(size: Int, entries: Int) {
        var training = SampleJSONResponses(seed: 1)
        var measured = SampleJSONResponses(seed: 2)
        trainingValues = (0..<max(1_500, (3 << 20) / size)).map { _ in training.next(targetSize: size) }
        values = (0..<entries).map { _ in measured.next(targetSize: size) }
        keys = (0..<entries).compactMap { try? CacheKey("https://api.example/v1/items?page=\($0)") }
    }
}
