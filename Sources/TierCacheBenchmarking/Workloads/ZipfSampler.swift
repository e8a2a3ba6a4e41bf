import Foundation

/// Zipf-distributed ranks in `0..<count` (rank 0 the most requested: P(k) ∝ 1 / (k + 1)^skew),
/// drawn by inverting the cumulative distribution with a binary search.
struct ZipfSampler: Sendable {
    private let cumulative: [Double]

    init(count: Int, skew: Double) {
        var sums = [Double]()
        sums.reserveCapacity(count)
        var total = 0.0
        for rank in 1...max(count, 1) {
            total += 1 / pow(Double(rank), skew)
            sums.append(total)
        }
        cumulative = sums.map { $0 / total }
    }

    func rank(_ uniform: Double) -> Int {
        var low = 0
        var high = cumulative.count - 1
        while low < high {
            let mid = (low + high) / 2
            if cumulative[mid] < uniform { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
