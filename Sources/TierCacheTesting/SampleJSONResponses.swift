import TierCache

/// Deterministic JSON API responses, for measuring how small responses compress (with and
/// without a dictionary) in tests and benchmarks.
///
/// Each response is a page of records the way REST APIs return them: the same field names and
/// structure in every response, with values that vary (ids, names, e-mail addresses, timestamps,
/// prices, tags) and some that do not compress at all (UUIDs, hashes), about a quarter of the
/// value bytes. The responses of one generator differ from one another as a real API's do, so a
/// dictionary trained on some of them has to generalise to the rest.
public struct SampleJSONResponses: Sendable {
    private var generator: SplitMix64

    /// A generator; equal seeds give equal responses.
    public init(seed: UInt64) {
        generator = SplitMix64(seed: seed &+ 0x9E37_79B9_7F4A_7C15)
    }

    /// The next response, of about `targetSize` bytes (at least one record, then whole records
    /// while they fit).
    public mutating func next(targetSize: Int) -> [UInt8] {
        let requestID = uuid()
        var records: [String] = []
        var length = 64
        repeat {
            let record = nextRecord()
            records.append(record)
            length += record.utf8.count + 1
        } while length + 260 < targetSize
        let page = Int(random(100)) + 1
        let body =
            "{\"data\":[\(records.joined(separator: ","))],\"meta\":{\"page\":\(page),\"per_page\":\(records.count),"
            + "\"total\":\(page * records.count + Int(random(500))),\"request_id\":\"\(requestID)\"}}"
        return Array(body.utf8)
    }

    private mutating func nextRecord() -> String {
        let first = Self.firstNames[Int(random(UInt64(Self.firstNames.count)))]
        let last = Self.lastNames[Int(random(UInt64(Self.lastNames.count)))]
        let city = Self.cities[Int(random(UInt64(Self.cities.count)))]
        let tags = (0..<Int(random(3)) + 1).map { _ in "\"\(Self.tags[Int(random(UInt64(Self.tags.count)))])\"" }
        let created =
            "20\(20 + random(6))-\(pad(random(12) + 1))-\(pad(random(28) + 1))T\(pad(random(24))):\(pad(random(60))):\(pad(random(60)))Z"
        let price = "\(random(500)).\(pad(random(100)))"
        return "{\"id\":\(100_000 + random(900_000)),\"uuid\":\"\(uuid())\",\"name\":\"\(first) \(last)\","
            + "\"email\":\"\(first.lowercased()).\(last.lowercased())\(random(100))@example.com\",\"active\":\(random(2) == 0),"
            + "\"created_at\":\"\(created)\",\"address\":{\"city\":\"\(city)\",\"postcode\":\"\(10000 + random(89999))\"},"
            + "\"price\":\(price),\"tags\":[\(tags.joined(separator: ","))],\"etag\":\"\(hex(16))\"}"
    }

    private func pad(_ value: UInt64) -> String { value < 10 ? "0\(value)" : "\(value)" }

    private mutating func uuid() -> String {
        "\(hex(8))-\(hex(4))-4\(hex(3))-\(hex(4))-\(hex(12))"
    }

    private mutating func hex(_ count: Int) -> String {
        let digits = Array("0123456789abcdef")
        return String((0..<count).map { _ in digits[Int(random(16))] })
    }

    /// The package's SplitMix64, reduced to `0..<bound`.
    private mutating func random(_ bound: UInt64) -> UInt64 {
        generator.next() % bound
    }

    private static let firstNames = [
        "Ada", "Alan", "Grace", "Linus", "Margaret", "Dennis", "Barbara", "Ken", "Frances", "Edsger", "Radia", "Tim",
        "Sophie", "John", "Hedy", "Donald", "Katherine", "Niklaus", "Shafi", "Leslie", "Anita", "Bjarne", "Adele",
        "Guido",
    ]
    private static let lastNames = [
        "Lovelace", "Turing", "Hopper", "Torvalds", "Hamilton", "Ritchie", "Liskov", "Thompson", "Allen", "Dijkstra",
        "Perlman", "Berners-Lee", "Wilson", "McCarthy", "Lamarr", "Knuth", "Johnson", "Wirth", "Goldwasser", "Lamport",
        "Borg", "Stroustrup", "Goldberg", "van Rossum",
    ]
    private static let cities = [
        "Amsterdam", "Berlin", "Lisbon", "Oslo", "Vienna", "Madrid", "Dublin", "Prague", "Zurich", "Helsinki", "Warsaw",
        "Copenhagen", "Brussels", "Budapest", "Athens", "Rome",
    ]
    private static let tags = [
        "new", "sale", "featured", "limited", "bestseller", "eco", "premium", "clearance", "gift", "bundle", "preorder",
        "exclusive",
    ]
}
