import CacheSimulation

/// The share of reads, writes and deletes in a workload.
///
/// A read that misses stores the value when ``readThrough-property`` is on (as an application filling its
/// cache from the origin does); the store is part of the read's latency, and the read counts as a
/// miss. Writes store a fresh value; deletes remove the key.
public struct OperationMix: Sendable, Hashable, CustomStringConvertible {
    /// The share of reads (0...1).
    public var reads: Double
    /// The share of writes (0...1).
    public var writes: Double
    /// The share of deletes (0...1).
    public var deletes: Double
    /// Whether a read that misses stores the value.
    public var readThrough: Bool

    /// A mix; the shares must add up to 1.
    public init(reads: Double, writes: Double = 0, deletes: Double = 0, readThrough: Bool = true) {
        self.reads = reads
        self.writes = writes
        self.deletes = deletes
        self.readThrough = readThrough
    }

    /// Reads only, through: every miss stores (the default).
    public static let readThrough = OperationMix(reads: 1)

    /// Parses `R:W:D` percentages or shares (`90:9:1`, `0.8:0.2:0`); two parts mean no deletes.
    public init(parsing text: String) throws(BenchmarkError) {
        // Empty parts are kept (and refused): dropping them read `90::10` as 10% writes.
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map {
            Double($0.trimmingPrefix(" "))
        }
        guard (2...3).contains(parts.count), let values = parts as? [Double] else {
            throw .invalidWorkload("a mix is READS:WRITES[:DELETES], e.g. 90:9:1 (got \"\(text)\")")
        }
        let total = values.reduce(0, +)
        guard total > 0, values.allSatisfy({ $0 >= 0 && $0.isFinite }) else {
            throw .invalidWorkload("a mix's parts must be zero or positive, and not all zero (got \"\(text)\")")
        }
        self.init(
            reads: values[0] / total, writes: values[1] / total, deletes: values.count > 2 ? values[2] / total : 0)
    }

    /// The shares in words, for reports.
    public var description: String {
        "\(wholePercent(reads))% reads\(readThrough ? " (through)" : ""), \(wholePercent(writes))% writes, "
            + "\(wholePercent(deletes))% deletes"
    }

    func validate() throws(BenchmarkError) {
        let shares = [reads, writes, deletes]
        guard shares.allSatisfy({ $0 >= 0 && $0.isFinite }), abs(shares.reduce(0, +) - 1) < 1e-9 else {
            throw .invalidWorkload("a mix's shares must be zero or positive and add up to 1 (\(self))")
        }
    }
}

/// A share as a whole percentage, for descriptions. They show values not yet validated (a mix's
/// validation error quotes the mix), so NaN, infinities and shares past an `Int` print as such
/// rather than trap.
func wholePercent(_ share: Double) -> String { ChartFormat.fixed(share * 100, digits: 0) }

/// One request of a workload.
enum Operation: UInt8, Sendable {
    case read, write, delete
}
