/// Appends SVG elements to a document; every text is escaped.
struct SVGBuilder {
    private var body = ""
    let width: Double
    let height: Double

    init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    static func number(_ value: Double) -> String { ChartFormat.fixed(value, digits: 1) }

    var document: String {
        """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Self.number(width))" height="\(Self.number(height))" viewBox="0 0 \(Self.number(width)) \(Self.number(height))" font-family="-apple-system, 'Segoe UI', Helvetica, Arial, sans-serif">
        <rect width="100%" height="100%" fill="#ffffff"/>
        \(body)</svg>

        """
    }

    mutating func text(
        _ content: String, x: Double, y: Double, size: Double, anchor: String = "start", weight: String = "normal",
        rotate: Double? = nil
    ) {
        let transform =
            rotate.map { " transform=\"rotate(\(Self.number($0)) \(Self.number(x)) \(Self.number(y)))\"" } ?? ""
        body +=
            "<text x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" font-size=\"\(Self.number(size))\" text-anchor=\"\(anchor)\" font-weight=\"\(weight)\" fill=\"#222222\"\(transform)>\(content.xmlEscaped)</text>\n"
    }

    mutating func line(
        x1: Double, y1: Double, x2: Double, y2: Double, stroke: String, width: Double = 1, dash: String? = nil
    ) {
        let dashing = dash.map { " stroke-dasharray=\"\($0)\"" } ?? ""
        body +=
            "<line x1=\"\(Self.number(x1))\" y1=\"\(Self.number(y1))\" x2=\"\(Self.number(x2))\" y2=\"\(Self.number(y2))\" stroke=\"\(stroke)\" stroke-width=\"\(Self.number(width))\"\(dashing)/>\n"
    }

    mutating func rect(x: Double, y: Double, width: Double, height: Double, fill: String, stroke: String) {
        body +=
            "<rect x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" width=\"\(Self.number(max(0, width)))\" height=\"\(Self.number(max(0, height)))\" fill=\"\(fill)\" stroke=\"\(stroke)\"/>\n"
    }

    mutating func path(_ data: String, stroke: String, dash: String? = nil) {
        guard !data.isEmpty else { return }
        let dashing = dash.map { " stroke-dasharray=\"\($0)\"" } ?? ""
        body +=
            "<path d=\"\(data)\" fill=\"none\" stroke=\"\(stroke)\" stroke-width=\"2\" stroke-linejoin=\"round\"\(dashing)/>\n"
    }

    mutating func circle(x: Double, y: Double, radius: Double, fill: String) {
        body +=
            "<circle cx=\"\(Self.number(x))\" cy=\"\(Self.number(y))\" r=\"\(Self.number(radius))\" fill=\"\(fill)\"/>\n"
    }
}
