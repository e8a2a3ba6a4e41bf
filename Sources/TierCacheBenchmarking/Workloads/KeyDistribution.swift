import TierCache

/// Which keys a synthetic workload requests.
public enum KeyDistribution: Sendable, Hashable, CustomStringConvertible {
    /// Zipf: the k-th most popular key is requested in proportion to 1 / k^skew (0 is uniform;
    /// 0.6–1.0 is typical of web and CDN traffic).
    case zipf(skew: Double)
    /// Every key equally often.
    case uniform
    /// A hot set: `hotFraction` of the keys receive `hotProbability` of the requests, uniformly
    /// within each set (YCSB's hotspot).
    case hotspot(hotFraction: Double, hotProbability: Double)
    /// A Zipf-skewed hot set of `hotKeys` keys, with `scanProbability` of the requests walking
    /// the other keys in order, round and round: the one-pass scans (backups, crawlers, analytics)
    /// that flush an LRU and that scan-resistant policies are built for.
    case scan(hotKeys: Int, scanProbability: Double, skew: Double = 0.99)

    /// The distribution in words, for reports.
    public var description: String {
        switch self {
        case .zipf(let skew): "Zipf \(skew)"
        case .uniform: "uniform"
        case .hotspot(let fraction, let probability):
            "hotspot (\(wholePercent(fraction))% of keys get \(wholePercent(probability))%)"
        case .scan(let hotKeys, let probability, let skew):
            "\(hotKeys) hot keys (Zipf \(skew)) with \(wholePercent(probability))% scans"
        }
    }

    /// Throws unless the parameters make a distribution over `keys` keys.
    func validate(keys: Int) throws(BenchmarkError) {
        switch self {
        case .zipf(let skew):
            guard skew.isFinite, skew >= 0 else { throw .invalidWorkload("a Zipf skew must be zero or positive") }
        case .uniform: break
        case .hotspot(let fraction, let probability):
            guard fraction > 0, fraction < 1, probability >= 0, probability <= 1 else {
                throw .invalidWorkload("a hotspot's key fraction must be in (0, 1) and its probability in [0, 1]")
            }
        case .scan(let hotKeys, let probability, let skew):
            guard hotKeys > 0, hotKeys < keys else {
                throw .invalidWorkload("a scan's hot set must hold from 1 to \(keys - 1) keys (of \(keys))")
            }
            guard probability >= 0, probability <= 1, skew.isFinite, skew >= 0 else {
                throw .invalidWorkload("a scan's probability must be in [0, 1] and its skew zero or positive")
            }
        }
    }

    /// A generator of `count` keys under this distribution.
    func sampler(keys count: Int) -> KeySampler {
        switch self {
        case .zipf(let skew): KeySampler(kind: .zipf(ZipfSampler(count: count, skew: skew)), keys: count)
        case .uniform: KeySampler(kind: .uniform, keys: count)
        case .hotspot(let fraction, let probability):
            KeySampler(
                kind: .hotspot(hot: max(1, min(count - 1, Int(Double(count) * fraction))), probability: probability),
                keys: count)
        case .scan(let hotKeys, let probability, let skew):
            KeySampler(
                kind: .scan(hot: ZipfSampler(count: hotKeys, skew: skew), hotKeys: hotKeys, probability: probability),
                keys: count)
        }
    }
}

/// Draws keys (as object ids) for one ``KeyDistribution``.
struct KeySampler {
    enum Kind {
        case zipf(ZipfSampler)
        case uniform
        case hotspot(hot: Int, probability: Double)
        case scan(hot: ZipfSampler, hotKeys: Int, probability: Double)
    }

    let kind: Kind
    let keys: Int
    /// The next key of the scan, from `hotKeys` up, wrapping.
    private var scanPosition = 0

    init(kind: Kind, keys: Int) {
        self.kind = kind
        self.keys = keys
    }

    mutating func next(_ random: inout SplitMix64) -> Int {
        switch kind {
        case .zipf(let zipf):
            return zipf.rank(random.nextUnit())
        case .uniform:
            return random.next(below: keys)
        case .hotspot(let hot, let probability):
            // Over a single key the hot set is every key and the cold set is empty: a cold draw
            // stays in the hot set rather than yield key `keys`. The draws are the same otherwise.
            let hotDraw = random.nextUnit() < probability
            guard !hotDraw, hot < keys else { return random.next(below: hot) }
            return hot + random.next(below: keys - hot)
        case .scan(let hot, let hotKeys, let probability):
            guard random.nextUnit() < probability else { return hot.rank(random.nextUnit()) }
            let key = hotKeys + scanPosition
            scanPosition = (scanPosition + 1) % (keys - hotKeys)
            return key
        }
    }
}
