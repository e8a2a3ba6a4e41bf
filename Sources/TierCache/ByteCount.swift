/// A number of bytes as people write it, parsed and printed one way everywhere: options of the
/// command-line tools, configuration files, reports.
///
/// Accepted forms (units are case-insensitive, a space before the unit is allowed, and every unit
/// is a power of 1024, as in ``MemoryTier`` and `URLCache` capacities):
///
/// | written | bytes |
/// |---|---|
/// | `1048576`, `1048576B` | 1,048,576 |
/// | `512KiB`, `512KB`, `512K` | 524,288 |
/// | `64MiB`, `64MB`, `64M` | 67,108,864 |
/// | `1.5GB`, `1.5GiB`, `1.5G` | 1,610,612,736 |
/// | `2TiB`, `2TB`, `2T` | 2,199,023,255,552 |
///
/// A decimal with a unit is rounded down to a whole byte; a count without a unit must be whole.
/// Percentages are not byte counts: where one makes sense (a simulation's capacity as a share of a
/// trace's footprint) the option's own type reads it and hands the rest to this parser.
public struct ByteCount: Hashable, Sendable, CustomStringConvertible {
    /// The count.
    public let bytes: Int

    /// A count of `bytes` bytes.
    public init(bytes: Int) { self.bytes = bytes }

    /// Text that is not a byte count; its description names the accepted forms.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The text as given.
        public let text: String
        /// What was wrong, and the forms that work.
        public var description: String {
            "\"\(text)\" is not a size: write a whole number of bytes (1048576) or a number with a unit "
                + "(512KiB, 64MiB, 1.5GB, 2TiB; K, M, G and T are powers of 1024)"
        }
    }

    /// The units, by their lowercased spellings, with their factors.
    private static let units: [(spellings: [String], factor: Int)] = [
        (["b"], 1), (["k", "kb", "kib"], 1 << 10), (["m", "mb", "mib"], 1 << 20),
        (["g", "gb", "gib"], 1 << 30), (["t", "tb", "tib"], 1 << 40),
    ]

    /// Parses `text` in one of the accepted forms.
    ///
    /// - Throws: ``ParseError`` for an empty, negative, malformed or overflowing count.
    public init(parsing text: String) throws(ParseError) {
        let trimmed = Substring(text).drop { $0 == " " || $0 == "\t" }
        let numberEnd = trimmed.firstIndex { !($0.isASCII && ($0.isNumber || $0 == ".")) } ?? trimmed.endIndex
        let number = trimmed[..<numberEnd]
        let unit = trimmed[numberEnd...].trimmingPrefix(" ").lowercased().filter { $0 != " " && $0 != "\t" }
        guard !number.isEmpty, number.first != ".", number.last != "." else { throw ParseError(text: text) }
        guard !unit.isEmpty else {
            guard let whole = Int(number) else { throw ParseError(text: text) }
            self.bytes = whole
            return
        }
        guard let factor = Self.units.first(where: { $0.spellings.contains(unit) })?.factor else {
            throw ParseError(text: text)
        }
        if let whole = Int(number) {
            let (product, overflow) = whole.multipliedReportingOverflow(by: factor)
            guard !overflow else { throw ParseError(text: text) }
            self.bytes = product
        } else {
            guard let value = Double(number), value.isFinite else { throw ParseError(text: text) }
            let product = (value * Double(factor)).rounded(.down)
            guard product < 9.2e18 else { throw ParseError(text: text) }
            self.bytes = Int(product)
        }
    }

    /// Parses `text` as ``init(parsing:)`` does; `nil` where that throws.
    public init?(_ text: String) {
        guard let parsed = try? ByteCount(parsing: text) else { return nil }
        self = parsed
    }

    /// `bytes` with a binary unit: `512 B`, `1.5 KiB`, `256 MiB`.
    public var description: String { Self.format(bytes) }

    /// `bytes` with a binary unit, as every report and message of the package prints a size:
    /// `512 B`, `1.5 KiB`, `256 MiB` (one decimal below 100 of a unit, none when whole or above).
    public static func format(_ bytes: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
        var scaled = Double(bytes)
        var unit = 0
        while abs(scaled) >= 1024, unit < units.count - 1 {
            scaled /= 1024
            unit += 1
        }
        let tenths = Int((abs(scaled) * 10).rounded())
        let sign = scaled < 0 && tenths != 0 ? "-" : ""
        let number =
            unit == 0 || tenths % 10 == 0 || abs(scaled) >= 100
            ? String(Int(abs(scaled).rounded())) : "\(tenths / 10).\(tenths % 10)"
        return sign + number + " " + units[unit]
    }
}
