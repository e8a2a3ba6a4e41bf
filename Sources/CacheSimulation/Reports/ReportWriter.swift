import Foundation

/// Writes a ``Report`` as files: `NAME.csv` (the first table), `NAME.json`, `NAME-N.svg` (one per
/// chart) and `NAME.html`, a single self-contained page with the charts inline.
public struct ReportWriter: Sendable {
    /// A kind of file the writer can produce.
    public enum Format: String, Sendable, CaseIterable {
        /// The report's first table as comma-separated values.
        case csv
        /// The whole report (tables, charts' series, notes) as JSON.
        case json
        /// Each chart as an SVG image.
        case svg
        /// One self-contained page with the tables and the charts inline.
        case html
    }

    /// Where the files go (created if missing).
    public let directory: URL
    /// The files' common name, before the extension.
    public let baseName: String
    /// Which files to write.
    public let formats: Set<Format>

    /// A writer of `formats` (all by default) into `directory`.
    public init(directory: URL, baseName: String, formats: Set<Format> = Set(Format.allCases)) {
        self.directory = directory
        self.baseName = baseName
        self.formats = formats
    }

    /// Writes the files and returns their paths.
    @discardableResult
    public func write(_ report: Report) throws -> [String] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var written: [String] = []
        func save(_ text: String, _ name: String) throws {
            let url = directory.appendingPathComponent(name)
            try Data(text.utf8).write(to: url, options: .atomic)
            written.append(url.path)
        }
        if formats.contains(.csv), let table = report.tables.first { try save(table.csv, "\(baseName).csv") }
        if formats.contains(.json) { try save(report.json, "\(baseName).json") }
        if formats.contains(.svg) {
            var names: Set<String> = []
            for (index, chart) in report.charts.enumerated() {
                let name = report.charts.count == 1 ? "\(baseName).svg" : "\(baseName)-\(index + 1).svg"
                try save(Self.markedChart(chart.svg, report: baseName), name)
                names.insert(name)
            }
            try removeEarlierCharts(keeping: names)
        }
        if formats.contains(.html) { try save(HTMLReport.render(report), "\(baseName).html") }
        return written
    }

    /// Removes the charts an earlier report of this name left that this one did not write (a
    /// report of three charts rewritten as one left `NAME-1.svg` to `NAME-3.svg` beside the new
    /// `NAME.svg`, figures of two runs side by side). A chart is this report's if it says so
    /// (``markedChart(_:report:)``): `NAME-1.svg` is also the one chart of a report named
    /// `NAME-1`, which must stay. Charts written before the mark existed are left alone.
    private func removeEarlierCharts(keeping names: Set<String>) throws {
        let prefix = "\(baseName)-"
        let mark = Data(Self.chartMark(report: baseName).utf8)
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path)
        where !names.contains(name) && name.hasSuffix(".svg") {
            let stem = String(name.dropLast(4))
            let isNamedAsChart =
                stem == baseName
                || (stem.hasPrefix(prefix) && stem.count > prefix.count
                    && stem.dropFirst(prefix.count).allSatisfy { $0.isASCII && $0.isNumber })
            let url = directory.appendingPathComponent(name)
            guard isNamedAsChart, let contents = try? Data(contentsOf: url), contents.range(of: mark) != nil else {
                continue
            }
            try FileManager.default.removeItem(at: url)
        }
    }

    /// The element that names the report a chart file belongs to.
    static func chartMark(report baseName: String) -> String {
        "<metadata>TierCache report: \(baseName.xmlEscaped)</metadata>"
    }

    /// `svg` with ``chartMark(report:)`` as the first child of its root element.
    static func markedChart(_ svg: String, report baseName: String) -> String {
        guard let root = svg.range(of: "<svg"), let end = svg[root.upperBound...].firstIndex(of: ">") else {
            return svg
        }
        let afterTag = svg.index(after: end)
        return String(svg[..<afterTag]) + Self.chartMark(report: baseName) + String(svg[afterTag...])
    }
}

/// One self-contained HTML page: inline CSS and SVG, no scripts, no external fonts or images.
public enum HTMLReport {
    /// The report as one HTML page.
    public static func render(_ report: Report) -> String {
        var html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(report.title.xmlEscaped)</title>
            <style>
            body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2rem auto; max-width: 980px; color: #222; padding: 0 1rem; }
            h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
            table { border-collapse: collapse; margin: .5rem 0 1.5rem; font-size: .9rem; }
            th, td { border-bottom: 1px solid #ddd; padding: .3rem .7rem; text-align: right; }
            th:first-child, td:first-child { text-align: left; }
            th { background: #f3f3f3; }
            dl { display: grid; grid-template-columns: max-content auto; gap: .2rem 1rem; }
            dt { font-weight: 600; } dd { margin: 0; }
            figure { margin: 1rem 0; } svg { max-width: 100%; height: auto; border: 1px solid #eee; }
            </style></head><body>
            <h1>\(report.title.xmlEscaped)</h1>
            <dl>

            """
        for (key, value) in report.summary {
            html += "<dt>\(key.xmlEscaped)</dt><dd>\(value.xmlEscaped)</dd>\n"
        }
        html += "</dl>\n"
        for chart in report.charts {
            html += "<figure>\n\(chart.svg)</figure>\n"
        }
        for table in report.tables {
            html += "<h2>\(table.title.xmlEscaped)</h2>\n<table><thead><tr>"
            html += table.columns.map { "<th>\($0.xmlEscaped)</th>" }.joined()
            html += "</tr></thead><tbody>\n"
            for row in table.rows {
                html += "<tr>" + row.map { "<td>\($0.xmlEscaped)</td>" }.joined() + "</tr>\n"
            }
            html += "</tbody></table>\n"
        }
        html += "</body></html>\n"
        return html
    }
}
