extension UInt64 {
    /// `fraction × self` rounded down, for a share of a capacity: 0 for a negative or NaN product and
    /// `UInt64.max` when it reaches 2^64 (a Double of a capacity near `UInt64.max` rounds up past it,
    /// and converting that back would trap).
    func scaled(by fraction: Double) -> UInt64 {
        let value = fraction * Double(self)
        if value >= 18_446_744_073_709_551_616.0 { return .max }
        guard value > 0 else { return 0 }
        return UInt64(value)
    }
}
