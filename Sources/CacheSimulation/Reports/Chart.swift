import TierCache

/// A chart in a report, rendered to standalone SVG (no scripts, no external fonts).
public enum Chart: Sendable {
    /// Lines through (x, y) points, one per series: hit ratio against capacity per policy.
    case lines(LineChart)
    /// One bar per label: throughput per tier.
    case bars(BarChart)

    /// The chart's title.
    public var title: String {
        switch self {
        case .lines(let chart): chart.title
        case .bars(let chart): chart.title
        }
    }

    /// The chart as a standalone SVG document.
    public var svg: String {
        switch self {
        case .lines(let chart): chart.svg
        case .bars(let chart): chart.svg
        }
    }
}

/// A line chart: one line per series, with optional horizontal guides.
public struct LineChart: Sendable {
    /// One line of the chart.
    public struct Series: Sendable {
        /// The series' name in the legend.
        public var name: String
        /// The points, in increasing x.
        public var points: [(x: Double, y: Double)]
        /// Drawn as steps (a miss-ratio curve is a step function) rather than straight segments.
        public var stepped: Bool

        /// A series through `points`.
        public init(name: String, points: [(x: Double, y: Double)], stepped: Bool = false) {
            self.name = name
            self.points = points
            self.stepped = stepped
        }
    }

    /// The chart's title.
    public var title: String
    /// The horizontal axis's label.
    public var xLabel: String
    /// The vertical axis's label.
    public var yLabel: String
    /// Whether the horizontal axis is logarithmic (capacities spanning decades).
    public var logarithmicX: Bool
    /// The lines.
    public var series: [Series]
    /// Horizontal reference lines (a target hit ratio), with labels.
    public var guides: [(y: Double, label: String)]
    /// Formats x tick labels (e.g. as byte sizes).
    public var formatX: @Sendable (Double) -> String
    /// What the vertical axis shows.
    public var yAxis: YAxis

    /// What a line chart's vertical axis shows.
    public enum YAxis: Sendable {
        /// Shares from 0 to 1 (hit ratios), labelled as percentages, up to at most 100%.
        case ratio
        /// Any non-negative values (requests per second), from 0 to a round number above the
        /// largest, labelled compactly (`1.5M`).
        case value
    }

    /// A line chart of `series`.
    public init(
        title: String, xLabel: String, yLabel: String, logarithmicX: Bool, series: [Series],
        guides: [(y: Double, label: String)] = [], yAxis: YAxis = .ratio,
        formatX: @escaping @Sendable (Double) -> String = { ChartFormat.compact($0) }
    ) {
        self.title = title
        self.xLabel = xLabel
        self.yLabel = yLabel
        self.logarithmicX = logarithmicX
        self.series = series
        self.guides = guides
        self.yAxis = yAxis
        self.formatX = formatX
    }
}

/// A bar chart: one bar per label.
public struct BarChart: Sendable {
    /// The chart's title.
    public var title: String
    /// The vertical axis's label.
    public var yLabel: String
    /// The bars, in order.
    public var bars: [(label: String, value: Double)]

    /// A bar chart of `bars`.
    public init(title: String, yLabel: String, bars: [(label: String, value: Double)]) {
        self.title = title
        self.yLabel = yLabel
        self.bars = bars
    }
}

/// Number formatting for axes and tables.
public enum ChartFormat {
    /// 1234 → "1.2k", 3_500_000 → "3.5M".
    public static func compact(_ value: Double) -> String {
        let units: [(scale: Double, suffix: String)] = [(1, ""), (1e3, "k"), (1e6, "M"), (1e9, "G")]
        let magnitude = abs(value)
        var unit = magnitude >= 1e9 ? 3 : magnitude >= 1e6 ? 2 : magnitude >= 1e3 ? 1 : 0
        // One decimal below 100 as printed (99.96 prints as 100, not 100.0), none for whole numbers.
        func digits(_ scaled: Double) -> Int {
            scaled == scaled.rounded() || abs((scaled * 10).rounded()) >= 1000 ? 0 : 1
        }
        // Whichever unit the value prints in: 999,960 rounds to 1000k, which is 1.0M.
        if unit < units.count - 1, abs(value / units[unit].scale).rounded() >= 1000 { unit += 1 }
        let scaled = value / units[unit].scale
        return fixed(scaled, digits: digits(scaled)) + units[unit].suffix
    }

    /// A fixed number of decimals without Foundation's `String(format:)`: from 0 to 18 of them
    /// (fewer count as 0, more as 18). NaN, the infinities and values whose digits an `Int` cannot
    /// hold print as Swift prints them (`1e+20`).
    public static func fixed(_ value: Double, digits: Int) -> String {
        let digits = min(max(digits, 0), 18)
        var factor = 1.0
        for _ in 0..<digits { factor *= 10 }
        let rounded = (abs(value) * factor).rounded()
        // `Int(_:)` traps past 2^63 (and on NaN, which fails the test too).
        guard rounded < 0x1p63 else { return "\(value)" }
        let whole = Int(rounded / factor)
        let sign = value < 0 && rounded != 0 ? "-" : ""
        guard digits > 0 else { return sign + String(whole) }
        let fraction = Int(rounded - Double(whole) * factor)
        let fractionText = String(fraction)
        return sign + String(whole) + "." + String(repeating: "0", count: digits - fractionText.count) + fractionText
    }

    /// An axis value in bytes, printed as `ByteCount.format(_:)` prints sizes.
    public static func bytes(_ value: Double) -> String {
        guard value.isFinite, abs(value) < 9e18 else { return "\(value)" }
        return ByteCount.format(Int(value.rounded()))
    }

    /// Capacities as bytes or as object counts.
    public static func capacity(in unit: CapacityUnit) -> @Sendable (Double) -> String {
        switch unit {
        case .bytes: return { bytes($0) }
        case .objects: return { compact($0) }
        }
    }

    /// A capacity exactly, for tables and their CSV, where a user reads a figure to configure:
    /// objects as a whole number with thousands separators (1249000 → "1,249,000"), bytes the
    /// same with " B". Axes round (``capacity(in:)``); a table that did printed 1,249,000 objects
    /// as "1.2M", and a recommended capacity up to 5% below the one measured.
    public static func exactCapacity(_ value: UInt64, in unit: CapacityUnit) -> String {
        var digits = Array(String(value))
        for position in stride(from: digits.count - 3, to: 0, by: -3) { digits.insert(",", at: position) }
        return String(digits) + (unit == .bytes ? " B" : "")
    }

    /// A ratio 0...1 as a percentage with two decimals: 0.32831 → "32.83%".
    public static func percent(_ ratio: Double) -> String { fixed(ratio * 100, digits: 2) + "%" }
}
