import Foundation
import Testing
import TierCache

@testable import CacheSimulation

#if canImport(FoundationXML)
import FoundationXML
#endif

@Suite struct ReportTests {
    private func sampleReport() throws -> Report {
        let trace = try Trace(name: "t<&>.txt", requests: (0..<1_000).map { TraceRequest(key: UInt64($0 % 97)) })
        let simulator = try Simulator(trace: trace, unit: .objects)
        let results = simulator.replay(policies: [.lru, .sieve], capacities: [5, 20, 80])
        return Report.simulation(trace: trace, unit: .objects, results: results, seconds: 0.1)
    }

    @Test func csvQuotesWhatNeedsQuoting() {
        let table = Report.Table(title: "t", columns: ["a", "b"], rows: [["x,y", "say \"hi\""], ["plain", "1"]])
        #expect(table.csv == "a,b\n\"x,y\",\"say \"\"hi\"\"\"\nplain,1\n")
    }

    /// In object mode the replay counts a request as one byte: the report's byte hit ratio
    /// column says "-" rather than repeat the hit ratio under another name.
    @Test func objectModeHasNoByteHitRatio() throws {
        let table = try #require(try sampleReport().tables.first)
        let column = try #require(table.columns.firstIndex(of: "byte hit ratio"))
        #expect(table.rows.allSatisfy { $0[column] == "-" })
    }

    /// `Report.Table` is public: a table built with fewer columns than a row's cells, or none,
    /// prints every cell (it indexed the widths at -1 and trapped).
    @Test func textOfRowsLongerThanTheColumns() {
        #expect(Report.Table(title: "", columns: [], rows: [["a", "bb"]]).text == "\n-  --\na  bb")
        #expect(
            Report.Table(title: "", columns: ["x"], rows: [["a", "bb"], ["ccc"]]).text == "x  \n---  --\na    bb\nccc")
    }

    @Test func csvKeepsFormulasFromSpreadsheetsAndNumbersAsTheyAre() {
        let table = Report.Table(
            title: "t", columns: ["policy", "value"],
            rows: [
                ["=HYPERLINK(\"x\")", "-0.5"], ["@sum", "+3"], ["-cmd", "-12.5%"], ["-", "-"], ["-2+3+cmd", "1"],
            ])
        #expect(
            table.csv
                == "policy,value\n\"'=HYPERLINK(\"\"x\"\")\",-0.5\n'@sum,+3\n'-cmd,-12.5%\n-,-\n'-2+3+cmd,1\n")
    }

    /// A trace named with control characters (a file name may hold them) still charts as XML.
    @Test func controlCharactersInNamesKeepTheSVGWellFormed() throws {
        let trace = try Trace(name: "a\u{1}b\u{1B}c", requests: (0..<100).map { TraceRequest(key: UInt64($0 % 7)) })
        let results = try Simulator(trace: trace, unit: .objects).replay(policies: [.lru], capacities: [2, 4])
        let svg = try #require(
            Report.simulation(trace: trace, unit: .objects, results: results, seconds: 0).charts.first?.svg)
        let parser = XMLParser(data: Data(svg.utf8))
        #expect(parser.parse(), "SVG does not parse: \(String(describing: parser.parserError))")
    }

    /// JSON has no NaN: a payload holding one is written with the figure as a string, and an
    /// encoding error as valid JSON.
    @Test func nonFiniteFiguresStillMakeValidJSON() throws {
        struct Odd: Encodable { let ratio = Double.nan }
        let json = encodeJSON(Odd())
        let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
        #expect(object?["ratio"] as? String == "NaN")
        struct Failing: Encodable {
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "a \"quoted\\ reason\n"))
            }
        }
        let failed = encodeJSON(Failing())
        #expect(try JSONSerialization.jsonObject(with: Data(failed.utf8)) is [String: Any])
    }

    @Test func svgIsWellFormedXMLWithEscapedText() throws {
        let report = try sampleReport()
        let svg = try #require(report.charts.first?.svg)
        #expect(svg.contains("t&lt;&amp;&gt;.txt"))
        let parser = XMLParser(data: Data(svg.utf8))
        #expect(parser.parse(), "SVG does not parse: \(String(describing: parser.parserError))")
    }

    /// Past the palette's ten colours (the ten built-in policies), a series is told apart by its
    /// dashes, and the legend's rows all fit in the drawing.
    @Test func manySeriesStayDistinctAndInTheLegend() {
        let series = (0..<25).map { LineChart.Series(name: "policy \($0)", points: [(1, 0.1), (2, 0.2)]) }
        let chart = LineChart(title: "t", xLabel: "x", yLabel: "y", logarithmicX: false, series: series)
        let styles = (0..<25).map { LineChart.style(of: $0) }
        #expect(Set(styles.map { "\($0.color) \($0.dash ?? "")" }).count == 25)
        let svg = chart.svg
        #expect(svg.contains("stroke-dasharray=\"7 4\""))
        let height = svg.firstRange(of: "height=\"").map { svg[$0.upperBound...].prefix { $0 != "\"" } }
        #expect(height.flatMap { Double($0) }.map { $0 >= 40 + 14 + 25 * 18 } == true, "\(String(describing: height))")
    }

    /// A point that is not finite is left out: an infinite x on a log axis made its ticks count
    /// up for ever, and a NaN wrote `nan` into the SVG.
    @Test(arguments: [true, false])
    func pointsThatAreNotFiniteAreLeftOut(logarithmicX: Bool) {
        let series = [
            LineChart.Series(name: "a", points: [(1, 0.1), (.infinity, 0.2), (10, .nan), (.nan, 0.3), (100, 0.4)])
        ]
        let chart = LineChart(
            title: "t", xLabel: "x", yLabel: "y", logarithmicX: logarithmicX, series: series,
            guides: [(y: .nan, label: "g")])
        let svg = chart.svg
        #expect(!svg.contains("nan") && !svg.contains("inf"))
        #expect(XMLParser(data: Data(svg.utf8)).parse())
    }

    @Test func htmlIsSelfContained() throws {
        let html = HTMLReport.render(try sampleReport())
        #expect(html.contains("<svg"))
        #expect(!html.contains("<script"))
        #expect(!html.contains("src=\"http") && !html.contains("href=\"http") && !html.contains("@import"))
        #expect(html.contains("<td>LRU</td>"))
    }

    @Test func jsonRoundTripsTheResults() throws {
        let report = try sampleReport()
        let object = try JSONSerialization.jsonObject(with: Data(report.json.utf8)) as? [String: Any]
        #expect((object?["results"] as? [Any])?.count == 6)
    }

    @Test func theWriterWritesEveryFormat() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tiercache-report-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let written = try ReportWriter(directory: directory, baseName: "r").write(try sampleReport())
        #expect(
            Set(written.map { URL(fileURLWithPath: $0).lastPathComponent }) == ["r.csv", "r.json", "r.svg", "r.html"])
    }

    /// A report rewritten with fewer charts leaves none of the earlier ones beside it; files of
    /// other names stay.
    @Test func theWriterRemovesChartsOfAnEarlierReport() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tiercache-report-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let one = try sampleReport()
        var three = one
        three.charts = Array(repeating: try #require(one.charts.first), count: 3)
        let writer = ReportWriter(directory: directory, baseName: "r", formats: [.svg])
        try writer.write(three)
        try Data().write(to: directory.appendingPathComponent("r-notes.svg"))
        try Data().write(to: directory.appendingPathComponent("other-1.svg"))
        // Reports `r-7` and `r-2`, of one chart each: their charts are named as charts of `r`
        // would be, with (`r-7`) and without (`r-2`) the report's other files beside them.
        try ReportWriter(directory: directory, baseName: "r-7", formats: [.svg, .json]).write(one)
        try writer.write(one)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(names == ["other-1.svg", "r-7.json", "r-7.svg", "r-notes.svg", "r.svg"])
        try writer.write(three)
        let again = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(again == ["other-1.svg", "r-1.svg", "r-2.svg", "r-3.svg", "r-7.json", "r-7.svg", "r-notes.svg"])
        try ReportWriter(directory: directory, baseName: "r-2", formats: [.svg]).write(one)
        try writer.write(one)
        let last = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(last == ["other-1.svg", "r-2.svg", "r-7.json", "r-7.svg", "r-notes.svg", "r.svg"])
        // A chart file says which report it belongs to, in an element an SVG viewer does not draw.
        let chart = try String(contentsOf: directory.appendingPathComponent("r-2.svg"), encoding: .utf8)
        #expect(chart.contains("<metadata>TierCache report: r-2</metadata>"))
    }

    @Test func numbersFormatWithoutFoundation() {
        #expect(ChartFormat.fixed(3.14159, digits: 2) == "3.14")
        #expect(ChartFormat.fixed(-0.5, digits: 1) == "-0.5")
        #expect(ChartFormat.fixed(2.05, digits: 1) == "2.1" || ChartFormat.fixed(2.05, digits: 1) == "2.0")
        #expect(ChartFormat.percent(0.32831) == "32.83%")
        #expect(ByteCount.format(1536) == "1.5 KiB")
        #expect(ChartFormat.compact(3_500_000) == "3.5M")
        // The unit is the one the value prints in.
        #expect(ChartFormat.compact(999_960) == "1.0M")
        #expect(ChartFormat.compact(999.6) == "1.0k")
        #expect(ChartFormat.compact(999_400) == "999k")
        #expect(ChartFormat.compact(-999_960_000) == "-1.0G")
        #expect(ChartFormat.compact(99_960) == "100k")
        #expect(ChartFormat.compact(99.96) == "100")
        #expect(ChartFormat.compact(99_940) == "99.9k")
    }

    /// Tables print capacities exactly: a figure a user configures from must not be rounded (the
    /// tuner's recommendation printed 1,249,000 objects as "1.2M", below what was measured).
    @Test func tablesPrintCapacitiesExactly() throws {
        #expect(ChartFormat.exactCapacity(1_249_000, in: .objects) == "1,249,000")
        #expect(ChartFormat.exactCapacity(999, in: .objects) == "999")
        #expect(ChartFormat.exactCapacity(1_000, in: .objects) == "1,000")
        #expect(ChartFormat.exactCapacity(0, in: .bytes) == "0 B")
        #expect(ChartFormat.exactCapacity(UInt64.max, in: .bytes) == "18,446,744,073,709,551,615 B")
        let trace = try Trace(name: "t", requests: (0..<3_000).map { TraceRequest(key: UInt64($0 % 1_500)) })
        let results = try Simulator(trace: trace, unit: .objects).replay(policies: [.lru], capacities: [1_249])
        let report = Report.simulation(trace: trace, unit: .objects, results: results, seconds: 0)
        #expect(report.tables.first?.rows.first?[1] == "1,249")
    }

    /// Past what an Int holds, or with digits out of range, numbers format instead of trapping:
    /// `simulate --capacity 100000000000000000` on a one-object trace prints a ratio of 1e17 as a
    /// percentage.
    @Test func hugeNumbersAndOddDigitCountsFormatWithoutTrapping() {
        #expect(ChartFormat.percent(1e17) == "1e+19%")
        #expect(ChartFormat.fixed(-1e300, digits: 2) == "-1e+300")
        #expect(ChartFormat.fixed(1e16, digits: 2) == "10000000000000000.00")
        #expect(ChartFormat.fixed(1e17, digits: 2) == "1e+17", "its hundredths would not fit an Int")
        #expect(ChartFormat.fixed(9.2e18, digits: 0) == "9200000000000000000")
        #expect(ChartFormat.fixed(1.5, digits: -1) == "2")
        #expect(ChartFormat.fixed(0.999, digits: 2) == "1.00")
        #expect(ChartFormat.fixed(-0.001, digits: 2) == "0.00")
        #expect(ChartFormat.fixed(1.25, digits: 40) == "1.250000000000000000")
        #expect(ChartFormat.fixed(.nan, digits: 2) == "nan")
        #expect(ChartFormat.fixed(-.infinity, digits: 2) == "-inf")
        #expect(ChartFormat.compact(1e300).hasSuffix("e+291G"))
    }
}
