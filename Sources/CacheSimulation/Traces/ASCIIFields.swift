/// Byte-level helpers for the text formats: no `String` is made per line.
enum ASCIIFields {
    /// Whether `byte` is a decimal digit, a minus sign or white space (a line break included):
    /// what a text trace of numbers is made of.
    static func isDecimalTextByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: " "), UInt8(ascii: "\t"),
            UInt8(ascii: "\n"), UInt8(ascii: "\r"):
            return true
        default:
            return false
        }
    }

    /// The next field of `line` from `cursor` on, separators skipped, and `cursor` moved past it;
    /// nil when only separators are left. Lets a reader that needs a line's first fields take
    /// them without splitting the whole line into an array (the ARC reader, a million lines a
    /// trace).
    @inline(__always)
    static func nextField(
        of line: UnsafeBufferPointer<UInt8>, from cursor: inout Int, separators: (UInt8, UInt8)
    ) -> UnsafeBufferPointer<UInt8>? {
        var start = cursor
        while start < line.count, line[start] == separators.0 || line[start] == separators.1 { start += 1 }
        guard start < line.count, let base = line.baseAddress else {
            cursor = line.count
            return nil
        }
        var end = start + 1
        while end < line.count, line[end] != separators.0, line[end] != separators.1 { end += 1 }
        cursor = end
        return UnsafeBufferPointer(start: base + start, count: end - start)
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

    /// Splits a line of the plain format into its fields: at runs of spaces and tabs in a trace
    /// laid out `key size timestamp` (``plainIsSpaced(_:)``), else at commas (a key may hold
    /// spaces).
    static func splitPlain(
        _ line: UnsafeBufferPointer<UInt8>, spaced: Bool, into fields: inout [UnsafeBufferPointer<UInt8>]
    ) {
        guard spaced else { return splitCSV(line, into: &fields) }
        fields.removeAll(keepingCapacity: true)
        var cursor = 0
        while let field = nextField(of: line, from: &cursor, separators: (UInt8(ascii: " "), UInt8(ascii: "\t"))) {
            fields.append(field)
        }
    }

    /// Whether a plain trace whose first request is `line` is laid out `key size [timestamp]`
    /// with spaces or tabs, the layout of many published traces (read as one string key a line,
    /// its sizes were lost): the line has no comma, and after its first field one or two more,
    /// the first of them an integer (a timestamp that is not one is then an error naming it).
    /// Decided once, from the first request, so that a trace of keys holding spaces
    /// (`GET /a b`) reads as before.
    static func plainIsSpaced(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !line.contains(UInt8(ascii: ",")) else { return false }
        var fields: [UnsafeBufferPointer<UInt8>] = []
        splitPlain(line, spaced: true, into: &fields)
        return (2...3).contains(fields.count) && unsigned(fields[1]) != nil
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

    /// The whole part of a non-negative decimal number (`17`, `17.25`, `17.`): digits, then
    /// optionally a point and digits; nil for anything else (a sign, an exponent, nothing before
    /// the point).
    static func unsignedWholePart(_ field: UnsafeBufferPointer<UInt8>) -> UInt64? {
        guard let point = field.firstIndex(of: UInt8(ascii: ".")) else { return unsigned(field) }
        let fraction = UnsafeBufferPointer(rebasing: field[(point + 1)...])
        guard fraction.allSatisfy({ $0 &- UInt8(ascii: "0") < 10 }) else { return nil }
        return unsigned(UnsafeBufferPointer(rebasing: field[..<point]))
    }

    /// A plain trace's key: a decimal integer written without leading zeros is the key itself;
    /// any other field is hashed (``fnv1a(_:)``), zero-padded integers too, so that `007`, `7`
    /// and `0007` (three names, as zero-padded codes are) stay three objects.
    static func plainKey(_ field: UnsafeBufferPointer<UInt8>) -> UInt64 {
        if field.count == 1 || field.first != UInt8(ascii: "0"), let value = unsigned(field) { return value }
        return fnv1a(field)
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
