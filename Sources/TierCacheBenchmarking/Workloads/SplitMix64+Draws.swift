import TierCache

/// The draws a workload makes from the package's seeded generator, so a workload is the same
/// sequence in every run and on every machine.
extension SplitMix64 {
    /// Uniform in 0..<1, with 53 random bits.
    mutating func nextUnit() -> Double {
        Double(next() >> 11) / Double(UInt64(1) << 53)
    }

    /// Uniform in `0..<bound` (`bound` > 0), without modulo bias worth measuring (128-bit product).
    mutating func next(below bound: Int) -> Int {
        Int(next().multipliedFullWidth(by: UInt64(bound)).high)
    }
}
