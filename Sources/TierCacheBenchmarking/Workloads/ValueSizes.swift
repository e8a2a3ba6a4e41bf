import TierCache

/// How large the values of a synthetic workload are: drawn once per key, so a key keeps its size.
public enum ValueSizes: Sendable, Hashable, CustomStringConvertible {
    /// Every value this many bytes.
    case fixed(Int)
    /// Uniform between the bounds, inclusive.
    case uniform(ClosedRange<Int>)

    /// The largest value a benchmark makes (larger sizes are refused as bad input).
    public static let maximum = 64 << 20

    /// The sizes in words, for reports.
    public var description: String {
        switch self {
        case .fixed(let size): "\(size) B"
        case .uniform(let range): "\(range.lowerBound)–\(range.upperBound) B"
        }
    }

    /// Parses `SIZE` or `MIN-MAX`, in bytes or with a unit (`4KiB`, `256-4096`).
    public init(parsing text: String) throws(BenchmarkError) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        func size(_ part: String) throws(BenchmarkError) -> Int {
            guard let bytes = ByteCount(part)?.bytes else {
                throw .invalidWorkload("\"\(part)\" is not a size in bytes (value sizes are SIZE or MIN-MAX)")
            }
            return bytes
        }
        switch parts.count {
        case 1: self = .fixed(try size(parts[0]))
        case 2:
            let low = try size(parts[0])
            let high = try size(parts[1])
            guard low <= high else { throw .invalidWorkload("value sizes \(text): the minimum exceeds the maximum") }
            self = .uniform(low...high)
        default: throw .invalidWorkload("value sizes are SIZE or MIN-MAX in bytes (got \"\(text)\")")
        }
        try validate()
    }

    func validate() throws(BenchmarkError) {
        let (low, high) =
            switch self {
            case .fixed(let size): (size, size)
            case .uniform(let range): (range.lowerBound, range.upperBound)
            }
        guard low > 0 else { throw .invalidWorkload("a value size must be positive (got \(low))") }
        guard high <= Self.maximum else {
            throw .invalidWorkload("a value size must be at most \(Self.maximum) bytes (got \(high))")
        }
    }

    func draw(_ random: inout SplitMix64) -> UInt32 {
        switch self {
        case .fixed(let size): UInt32(size)
        case .uniform(let range): UInt32(range.lowerBound + random.next(below: range.count))
        }
    }
}
