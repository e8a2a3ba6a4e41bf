/// Byte-level helpers for the text formats: no `String` is made per line.
enum ASCIIFields {
    /// Splits `line` at any of `separators`, skipping empty fields (so runs of spaces count as one).
    static func split(_ line: UnsafeBufferPointer<UInt8>, separators: (UInt8, UInt8), into fields: inout [UnsafeBufferPointer<UInt8>]) {
        fields.removeAll(keepingCapacity: true)
        guard let base = line.baseAddress else { return }
        var start = 0
        for index in 0...line.count {
            let atEnd = index == line.count
            if atEnd || line[index] == separators.0 || line[index] == separators.1 {
                if index > start { fields.append(UnsafeBufferPointer(start: base + start, count: index - start)) }
                start = index + 1
            }
        }
    }

    /// Splits a CSV line at commas, keeping empty fields so columns stay aligned.
    static func splitCSV(_ line: UnsafeBufferPointer<UInt8>, into fields: inout [UnsafeBufferPointer<UInt8>]) {
        fields.removeAll(keepingCapacity: true)
        guard let base = line.baseAddress else { return }
        var start = 0
        for index in 0...line.count where index == line.count || line[index] == UInt8(ascii: ",") {
            fields.append(trimmingSpaces(UnsafeBufferPointer(start: base + start, count: index - start)))
            start = index + 1
        }
    }

    static func trimmingSpaces(_ field: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        guard let base = field.baseAddress else { return field }
        var start = 0
        var end = field.count
        while start < end, field[start] == UInt8(ascii: " ") || field[start] == UInt8(ascii: "\t") { start += 1 }
        while end > start, field[end - 1] == UInt8(ascii: " ") || field[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        return UnsafeBufferPointer(start: base + start, count: end - start)
    }

    /// A non-negative decimal integer, or nil when the field is empty, has other characters or overflows.
    static func unsigned(_ field: UnsafeBufferPointer<UInt8>) -> UInt64? {
        guard !field.isEmpty else { return nil }
        var value: UInt64 = 0
        for byte in field {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(digit))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return value
    }

    /// 64-bit FNV-1a: a stable hash for string keys, the same on every run and platform.
    static func fnv1a(_ field: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in field {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }

    static func text(_ field: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: field.prefix(80), as: UTF8.self)
    }
}
