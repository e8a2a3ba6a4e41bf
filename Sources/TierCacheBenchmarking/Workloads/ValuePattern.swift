/// The bytes of benchmark values: JSON-like text (what HTTP caches mostly hold, and what zstd
/// compresses as it would real responses), cut from one shared 1 MiB pattern at an offset that
/// depends on the object, so values differ without costing a generator per request.
enum ValuePattern {
    static let bytes: [UInt8] = {
        var text = ""
        var index = 0
        while text.utf8.count < 1 << 20 {
            text +=
                "{\"id\":\(index),\"name\":\"item \(index)\",\"price\":\(index % 997).\(index % 100),\"tags\":[\"t\(index % 31)\",\"t\(index % 17)\"]},"
            index += 1
        }
        return Array(text.utf8)
    }()

    /// `size` bytes for the object `seed`; values larger than the pattern repeat it.
    static func value(size: Int, seed: UInt32) -> [UInt8] {
        let pattern = bytes
        guard size <= pattern.count else {
            var value = [UInt8]()
            value.reserveCapacity(size)
            while value.count < size { value.append(contentsOf: pattern.prefix(size - value.count)) }
            return value
        }
        let offset = Int(seed &* 2_654_435_761 % UInt32(pattern.count - size + 1))
        return Array(pattern[offset..<offset + size])
    }
}
