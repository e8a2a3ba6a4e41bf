import Foundation

/// A number of bytes as people write it: `1048576`, `512KiB`, `64MiB`, `2GiB` (`KB`, `MB` and `GB`
/// are read as powers of 1024 too), for command-line options and configuration files.
public struct ByteCount: Hashable, Sendable, CustomStringConvertible {
    /// The count.
    public let bytes: Int

    /// A count of `bytes` bytes.
    public init(bytes: Int) { self.bytes = bytes }

    /// Parses `text`; `nil` for a negative, malformed or overflowing count.
    public init?(_ text: String) {
        let units: [(String, Int)] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10), ("B", 1)]
        var number = Substring(text)
        var multiplier = 1
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            number = text.dropLast(suffix.count)
            multiplier = factor
            break
        }
        guard let value = Int(number.trimmingCharacters(in: .whitespaces)), value >= 0 else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { return nil }
        bytes = product
    }

    /// `bytes` with a binary unit: `512 B`, `1.5 KiB`, `256.0 MiB`.
    public var description: String { Self.format(bytes) }

    /// `bytes` with a binary unit: `512 B`, `1.5 KiB`, `256.0 MiB`.
    public static func format(_ bytes: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }
}
