import Foundation

extension LineChart {
    static let palette = [
        "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22",
    ]

    /// How the lines past the palette's colours are told apart: each round of colours has its
    /// own dashes (the eleventh series, a user's policy after the ten built-ins, is not LRU's twin).
    static let dashes: [String?] = [nil, "7 4", "2 3", "9 3 2 3"]

    /// The colour and dashes of series `index`.
    static func style(of index: Int) -> (color: String, dash: String?) {
        (palette[index % palette.count], dashes[index / palette.count % dashes.count])
    }

    /// Whether `point` can be drawn: finite, and right of 0 on a logarithmic axis. (An infinite
    /// x once made the log axis's ticks count up for ever; a NaN wrote `nan` into the SVG.)
    private func isDrawn(_ point: (x: Double, y: Double)) -> Bool {
        point.x.isFinite && point.y.isFinite && (!logarithmicX || point.x > 0)
    }

    /// The chart as a standalone SVG document, 720 wide and 420 high, higher when its legend
    /// needs more room (18 points a series). Points with a coordinate that is not finite, and at
    /// or left of 0 on a logarithmic x axis, are left out.
    public var svg: String {
        let left = 64.0, right = 170.0, top = 40.0, bottom = 56.0
        let width = 720.0
        let height = max(420.0, top + 14 + Double(series.count) * 18 + bottom)
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let drawn = series.flatMap { $0.points.filter(isDrawn) }
        let xs = drawn.map(\.x)
        let ys = drawn.map(\.y) + guides.map(\.y).filter(\.isFinite)
        var xMin = xs.min() ?? 0, xMax = xs.max() ?? 1
        if xMax <= xMin { xMax = xMin + 1 }
        if logarithmicX { xMin = max(xMin, 1e-9) }
        let yMin = 0.0
        let yMax: Double
        let yTicks: [Double]
        switch yAxis {
        case .ratio:
            yMax = min(1, (max(ys.max() ?? 1, 0.05) * 10).rounded(.up) / 10)
            // Every 10% (or 5% for short ranges).
            let yStep = yMax <= 0.3 ? 0.05 : 0.1
            yTicks = stride(from: 0, through: yMax + 1e-9, by: yStep).map { $0 }
        case .value:
            yMax = Self.roundCeiling(ys.max() ?? 1)
            yTicks = (0...5).map { yMax * Double($0) / 5 }
        }
        func x(_ value: Double) -> Double {
            let fraction =
                logarithmicX
                ? (log10(max(value, xMin)) - log10(xMin)) / max(log10(xMax) - log10(xMin), 1e-9)
                : (value - xMin) / (xMax - xMin)
            return left + fraction * plotWidth
        }
        func y(_ value: Double) -> Double { top + plotHeight - (value - yMin) / (yMax - yMin) * plotHeight }

        var out = SVGBuilder(width: width, height: height)
        out.text(title, x: left, y: 24, size: 15, weight: "bold")
        out.rect(x: left, y: top, width: plotWidth, height: plotHeight, fill: "#fafafa", stroke: "#cccccc")
        for tick in yTicks {
            out.line(x1: left, y1: y(tick), x2: left + plotWidth, y2: y(tick), stroke: "#e5e5e5")
            let label = yAxis == .ratio ? ChartFormat.fixed(tick * 100, digits: 0) + "%" : ChartFormat.compact(tick)
            out.text(label, x: left - 8, y: y(tick) + 4, size: 11, anchor: "end")
        }
        // X ticks: powers of ten on a log axis, five even steps otherwise.
        var xTicks: [Double] = []
        if logarithmicX {
            var decade = pow(10, floor(log10(xMin)))
            while decade <= xMax * 1.0001 {
                if decade >= xMin * 0.9999 { xTicks.append(decade) }
                decade *= 10
            }
            if xTicks.count < 2 { xTicks = [xMin, xMax] }
        } else {
            xTicks = (0...5).map { xMin + (xMax - xMin) * Double($0) / 5 }
        }
        for value in xTicks {
            out.line(x1: x(value), y1: top, x2: x(value), y2: top + plotHeight, stroke: "#e5e5e5")
            out.text(formatX(value), x: x(value), y: top + plotHeight + 16, size: 11, anchor: "middle")
        }
        out.text(
            xLabel + (logarithmicX ? " (log scale)" : ""), x: left + plotWidth / 2, y: height - 14, size: 12,
            anchor: "middle")
        out.text(yLabel, x: 16, y: top + plotHeight / 2, size: 12, anchor: "middle", rotate: -90)
        for guide in guides where guide.y.isFinite && guide.y <= yMax {
            out.line(x1: left, y1: y(guide.y), x2: left + plotWidth, y2: y(guide.y), stroke: "#555555", dash: "6 4")
            out.text(guide.label, x: left + plotWidth - 4, y: y(guide.y) - 4, size: 11, anchor: "end")
        }
        for (index, line) in series.enumerated() {
            let (color, dash) = Self.style(of: index)
            var path = ""
            var previous: (Double, Double)?
            for point in line.points.sorted(by: { $0.x < $1.x }) where isDrawn(point) {
                let px = x(point.x), py = y(point.y)
                if let previous {
                    if line.stepped { path += " L\(SVGBuilder.number(px)),\(SVGBuilder.number(previous.1))" }
                    path += " L\(SVGBuilder.number(px)),\(SVGBuilder.number(py))"
                } else {
                    path = "M\(SVGBuilder.number(px)),\(SVGBuilder.number(py))"
                }
                previous = (px, py)
            }
            out.path(path, stroke: color, dash: dash)
            if !line.stepped {
                for point in line.points where isDrawn(point) {
                    out.circle(x: x(point.x), y: y(point.y), radius: 2.5, fill: color)
                }
            }
            let legendY = top + 14 + Double(index) * 18
            out.line(
                x1: left + plotWidth + 14, y1: legendY - 4, x2: left + plotWidth + 34, y2: legendY - 4, stroke: color,
                width: 3, dash: dash)
            out.text(line.name, x: left + plotWidth + 40, y: legendY, size: 12)
        }
        return out.document
    }

    /// The smallest of 1, 2, 2.5 and 5 times a power of ten at or above `value` (1 for nothing
    /// positive): a value axis's top.
    static func roundCeiling(_ value: Double) -> Double {
        guard value > 0, value.isFinite else { return 1 }
        let decade = pow(10, floor(log10(value)))
        return [1, 2, 2.5, 5, 10].map { $0 * decade }.first { $0 >= value * (1 - 1e-12) } ?? 10 * decade
    }
}

extension BarChart {
    /// The chart as a standalone SVG document.
    public var svg: String {
        let width = 720.0, height = 380.0
        let left = 80.0, right = 24.0, top = 40.0, bottom = 70.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let maximum = max(bars.map(\.value).max() ?? 1, 1e-9)
        var out = SVGBuilder(width: width, height: height)
        out.text(title, x: left, y: 24, size: 15, weight: "bold")
        out.rect(x: left, y: top, width: plotWidth, height: plotHeight, fill: "#fafafa", stroke: "#cccccc")
        for step in 0...4 {
            let value = maximum * Double(step) / 4
            let py = top + plotHeight - plotHeight * Double(step) / 4
            out.line(x1: left, y1: py, x2: left + plotWidth, y2: py, stroke: "#e5e5e5")
            out.text(ChartFormat.compact(value), x: left - 8, y: py + 4, size: 11, anchor: "end")
        }
        out.text(yLabel, x: 16, y: top + plotHeight / 2, size: 12, anchor: "middle", rotate: -90)
        let slot = plotWidth / Double(max(bars.count, 1))
        for (index, bar) in bars.enumerated() {
            let barHeight = plotHeight * bar.value / maximum
            let px = left + slot * Double(index) + slot * 0.15
            out.rect(
                x: px, y: top + plotHeight - barHeight, width: slot * 0.7, height: barHeight,
                fill: LineChart.palette[index % LineChart.palette.count], stroke: "none")
            out.text(
                ChartFormat.compact(bar.value), x: px + slot * 0.35, y: top + plotHeight - barHeight - 5, size: 11,
                anchor: "middle")
            out.text(bar.label, x: px + slot * 0.35, y: top + plotHeight + 18, size: 12, anchor: "middle")
        }
        return out.document
    }
}
