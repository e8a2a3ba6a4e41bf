/// A report of one run (`simulate`, `tune` or `bench`), renderable as CSV, JSON, SVG and HTML.
///
/// It holds what a person reads — a summary, tables, charts — and, separately, the machine-readable
/// payload that becomes the JSON file.
public struct Report: Sendable {
    /// The report's heading.
    public var title: String
    /// Key facts shown above everything else (trace, unit, machine, duration, …).
    public var summary: [(String, String)]
    /// The tables, in order; the first also becomes the CSV file.
    public var tables: [Table]
    /// The charts, in order.
    public var charts: [Chart]
    /// The JSON document, already encoded (the callers own the schema of their results).
    public var json: String

    /// A report of the given parts.
    public init(title: String, summary: [(String, String)], tables: [Table], charts: [Chart], json: String) {
        self.title = title
        self.summary = summary
        self.tables = tables
        self.charts = charts
        self.json = json
    }

    /// A table: its first one becomes the CSV file.
    public struct Table: Sendable {
        /// The table's heading.
        public var title: String
        /// The column headings.
        public var columns: [String]
        /// The rows, one cell per column.
        public var rows: [[String]]

        /// A table of `rows` under `columns`.
        public init(title: String, columns: [String], rows: [[String]]) {
            self.title = title
            self.columns = columns
            self.rows = rows
        }

        /// RFC 4180 CSV: fields with commas, quotes or line breaks are quoted.
        public var csv: String {
            ([columns] + rows).map { row in row.map(Self.csvField).joined(separator: ",") }.joined(separator: "\n")
                + "\n"
        }

        /// The table as aligned plain text for a terminal.
        public var text: String {
            // As many widths as the longest line has cells: a row longer than the header (or a
            // table with no columns) has its extra cells aligned too.
            var widths = columns.map(\.count)
            for row in rows {
                if row.count > widths.count { widths += Array(repeating: 0, count: row.count - widths.count) }
                for (index, cell) in row.enumerated() {
                    widths[index] = max(widths[index], cell.count)
                }
            }
            func line(_ cells: [String]) -> String {
                cells.enumerated().map { index, cell in
                    let pad = String(repeating: " ", count: max(0, widths[index] - cell.count))
                    return index == 0 ? cell + pad : pad + cell
                }.joined(separator: "  ")
            }
            let rule = widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")
            return ([line(columns), rule] + rows.map(line)).joined(separator: "\n")
        }

        private static func csvField(_ field: String) -> String {
            // A text a spreadsheet would run as a formula (starting with `=`, `+`, `-` or `@`: a
            // policy or trace name such as `-2+3+cmd|...`) gets a leading apostrophe, as OWASP
            // advises. A number (`-0.5`, `-12%`, whole) and the placeholder `-` stay as they are.
            var field = field
            if let first = field.first, "=+-@\t\r".contains(first), field != "-",
                Double(field.hasSuffix("%") ? String(field.dropLast()) : field) == nil
            {
                field = "'" + field
            }
            guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return field }
            return "\"" + field.replacingAll("\"", with: "\"\"") + "\""
        }
    }
}

extension String {
    /// Replaces every occurrence of a character (no Foundation needed).
    func replacingAll(_ character: Character, with replacement: String) -> String {
        var result = ""
        result.reserveCapacity(count)
        for scalar in self {
            if scalar == character { result += replacement } else { result.append(scalar) }
        }
        return result
    }

    /// Escapes text for XML and HTML. Control characters XML 1.0 does not allow (C0 but tab,
    /// line feed and carriage return; a file name may hold them) become U+FFFD: escaped or not,
    /// they make a standalone SVG malformed.
    var xmlEscaped: String {
        var result = ""
        result.reserveCapacity(count)
        for character in self {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            default:
                if character.unicodeScalars.contains(where: { $0.value < 0x20 && ![9, 10, 13].contains($0.value) }) {
                    result += "\u{FFFD}"
                } else {
                    result.append(character)
                }
            }
        }
        return result
    }
}
