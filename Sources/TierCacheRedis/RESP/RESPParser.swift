import NIOCore

/// Parses RESP2 and RESP3 replies from a `ByteBuffer`, without consuming anything until a whole
/// reply is there. Garbage — an unknown type byte, a bad length, a line without CRLF, nesting or
/// sizes past the limits — throws ``RedisError`` (`protocolViolation`), never crashes.
struct RESPParser {
    /// The longest bulk string Redis takes by default (`proto-max-bulk-len`), and this parser's
    /// default limit.
    static let largestBulkString = 512 << 20

    var maximumBulkLength = largestBulkString
    var maximumAggregateCount = 1 << 20
    var maximumDepth = 32
    var maximumLineLength = 64 << 10

    /// Parses one reply starting at the buffer's reader index: the value and the bytes it spans,
    /// or nil when more bytes are needed.
    func parse(_ buffer: ByteBuffer) throws(RedisError) -> (RESPValue, Int)? {
        var offset = buffer.readerIndex
        guard let value = try parseValue(buffer, &offset, depth: 0) else { return nil }
        return (value, offset - buffer.readerIndex)
    }

    /// A reply that is a bulk string, a null, or an array of those (`GET`, `MGET`), as where its
    /// strings lie in the buffer, so that they are read in place instead of copied into
    /// ``RESPValue``s (see `RedisRecordsTarget`).
    enum BulkReply {
        /// A bulk string, or `nil` for a null.
        case one(Range<Int>?)
        /// An array of bulk strings and nulls.
        case many([Range<Int>?])
    }

    enum BulkParse {
        /// More bytes are needed.
        case incomplete
        /// The reply is of another shape: ``parse(_:)`` reads it.
        case other
        /// The reply, and the bytes it spans.
        case parsed(BulkReply, Int)
    }

    /// Parses one reply at the buffer's reader index if it is a bulk string, a null or an array of
    /// those; anything else is ``BulkParse/other``, and is left to ``parse(_:)``.
    func parseBulk(_ buffer: ByteBuffer) throws(RedisError) -> BulkParse {
        var cursor = buffer.readerIndex
        guard let type = buffer.getInteger(at: cursor, as: UInt8.self) else { return .incomplete }
        if type == UInt8(ascii: "*") {
            cursor += 1
            guard let line = try readLine(buffer, &cursor) else { return .incomplete }
            let count = try integer(buffer, line)
            guard count >= 0, count <= maximumAggregateCount else { return .other }
            var ranges: [Range<Int>?] = []
            ranges.reserveCapacity(min(Int(count), 1024))
            for _ in 0..<count {
                switch try bulkElement(buffer, &cursor) {
                case .incomplete: return .incomplete
                case .other: return .other
                case .parsed(let range): ranges.append(range)
                }
            }
            return .parsed(.many(ranges), cursor - buffer.readerIndex)
        }
        switch try bulkElement(buffer, &cursor) {
        case .incomplete: return .incomplete
        case .other: return .other
        case .parsed(let range): return .parsed(.one(range), cursor - buffer.readerIndex)
        }
    }

    private enum BulkElement {
        case incomplete, other
        case parsed(Range<Int>?)
    }

    /// A bulk string (`$`) or a null (`$-1`, `_`) at `cursor`.
    private func bulkElement(_ buffer: ByteBuffer, _ cursor: inout Int) throws(RedisError) -> BulkElement {
        guard let type = buffer.getInteger(at: cursor, as: UInt8.self) else { return .incomplete }
        guard type == UInt8(ascii: "$") || type == UInt8(ascii: "_") else { return .other }
        var next = cursor + 1
        guard let line = try readLine(buffer, &next) else { return .incomplete }
        if type == UInt8(ascii: "_") {
            guard line.isEmpty else { return .other }  // let parse(_:) say what is wrong
            cursor = next
            return .parsed(nil)
        }
        switch try stringBody(buffer, length: line, &next, nullable: true) {
        case .incomplete: return .incomplete
        case .null:
            cursor = next
            return .parsed(nil)
        case .bytes(let range):
            cursor = next
            return .parsed(range)
        }
    }

    private func parseValue(_ buffer: ByteBuffer, _ offset: inout Int, depth: Int) throws(RedisError) -> RESPValue? {
        guard depth <= maximumDepth else { throw .protocolViolation("replies nested more than \(maximumDepth) deep") }
        guard let type = buffer.getInteger(at: offset, as: UInt8.self) else { return nil }
        var cursor = offset + 1
        guard let line = try readLine(buffer, &cursor) else { return nil }
        let value: RESPValue
        switch type {
        case UInt8(ascii: "+"): value = .simpleString(text(buffer, line))
        case UInt8(ascii: "-"): value = .error(text(buffer, line))
        case UInt8(ascii: ":"): value = .integer(try integer(buffer, line))
        case UInt8(ascii: "("): value = .bigNumber(text(buffer, line))
        case UInt8(ascii: "_"): value = .null
        case UInt8(ascii: "#"):
            let flag = line.count == 1 ? buffer.getInteger(at: line.lowerBound, as: UInt8.self) : nil
            guard flag == UInt8(ascii: "t") || flag == UInt8(ascii: "f") else {
                throw .protocolViolation("a boolean must be t or f")
            }
            value = .boolean(flag == UInt8(ascii: "t"))
        case UInt8(ascii: ","):
            let text = text(buffer, line)
            guard let number = Double(text) ?? (text == "inf" ? .infinity : text == "-inf" ? -.infinity : nil) else {
                throw .protocolViolation("\"\(text.prefix(40))\" is not a double")
            }
            value = .double(number)
        case UInt8(ascii: "$"), UInt8(ascii: "="), UInt8(ascii: "!"):
            let range: Range<Int>
            switch try stringBody(buffer, length: line, &cursor, nullable: type == UInt8(ascii: "$")) {
            case .incomplete: return nil
            case .null:
                value = .null
                offset = cursor
                return value
            case .bytes(let bytes): range = bytes
            }
            let bytes = buffer.getBytes(at: range.lowerBound, length: range.count) ?? []
            switch type {
            case UInt8(ascii: "$"): value = .bulkString(bytes)
            case UInt8(ascii: "="): value = .bulkString(Array(bytes.dropFirst(min(4, bytes.count))))  // "txt:" prefix
            default: value = .error(String(decoding: bytes, as: UTF8.self))
            }
        case UInt8(ascii: "*"), UInt8(ascii: "~"), UInt8(ascii: ">"), UInt8(ascii: "%"), UInt8(ascii: "|"):
            let count = try integer(buffer, line)
            if count == -1, type == UInt8(ascii: "*") {
                value = .null
                break
            }
            guard count >= 0, count <= maximumAggregateCount else {
                throw .protocolViolation("an aggregate of \(count) elements")
            }
            let elements = type == UInt8(ascii: "%") || type == UInt8(ascii: "|") ? Int(count) * 2 : Int(count)
            var items: [RESPValue] = []
            items.reserveCapacity(min(elements, 1024))
            for _ in 0..<elements {
                guard let item = try parseValue(buffer, &cursor, depth: depth + 1) else { return nil }
                items.append(item)
            }
            switch type {
            case UInt8(ascii: "|"):
                // An attribute describes the value that follows it, which is the reply (RESP3):
                // taken for the reply, it shifted every later reply onto the wrong command.
                guard let described = try parseValue(buffer, &cursor, depth: depth + 1) else { return nil }
                value = described
            case UInt8(ascii: "%"):
                value = .map(stride(from: 0, to: items.count, by: 2).map { (items[$0], items[$0 + 1]) })
            case UInt8(ascii: ">"): value = .push(items)
            default: value = .array(items)
            }
        default:
            throw .protocolViolation("unknown reply type byte 0x\(String(type, radix: 16))")
        }
        offset = cursor
        return value
    }

    /// Where a string's bytes lie, once they have all arrived.
    private enum StringBody {
        case incomplete
        /// RESP2's null bulk string, `$-1`.
        case null
        case bytes(Range<Int>)
    }

    /// The bytes of a string (bulk, verbatim, blob error) whose length line is `line`, and
    /// `cursor` moved past them and their CRLF.
    private func stringBody(
        _ buffer: ByteBuffer, length line: Range<Int>, _ cursor: inout Int, nullable: Bool
    ) throws(RedisError) -> StringBody {
        let length = try integer(buffer, line)
        if length == -1, nullable { return .null }
        guard length >= 0, length <= maximumBulkLength else {
            throw .protocolViolation("a bulk string of \(length) bytes")
        }
        let count = Int(length)
        guard buffer.writerIndex - cursor >= count + 2 else { return .incomplete }
        guard buffer.getInteger(at: cursor + count, as: UInt8.self) == 13,
            buffer.getInteger(at: cursor + count + 1, as: UInt8.self) == 10
        else {
            throw .protocolViolation("a bulk string is not followed by CRLF")
        }
        defer { cursor += count + 2 }
        return .bytes(cursor..<(cursor + count))
    }

    /// Where the line starting at `cursor` lies (the bytes up to CRLF), advancing past its CRLF;
    /// nil when the line is not complete yet. A range rather than the bytes: a reply's lines are
    /// read in place, with no array made for each (two for every bulk string's length line).
    private func readLine(_ buffer: ByteBuffer, _ cursor: inout Int) throws(RedisError) -> Range<Int>? {
        let available = buffer.writerIndex - cursor
        let searchLength = min(available, maximumLineLength + 2)
        guard let view = buffer.viewBytes(at: cursor, length: searchLength) else { return nil }
        guard let carriageReturn = view.firstIndex(of: 13) else {
            if available > maximumLineLength + 1 {
                throw .protocolViolation("a reply line longer than \(maximumLineLength) bytes")
            }
            return nil
        }
        let lineLength = carriageReturn - view.startIndex
        // A line one byte over the limit has its CR inside the view: without this, it would wait
        // for more bytes for ever.
        guard lineLength <= maximumLineLength else {
            throw .protocolViolation("a reply line longer than \(maximumLineLength) bytes")
        }
        guard lineLength + 1 < searchLength else { return nil }
        guard buffer.getInteger(at: cursor + lineLength + 1, as: UInt8.self) == 10 else {
            throw .protocolViolation("a reply line ends in CR without LF")
        }
        let line = cursor..<(cursor + lineLength)
        cursor += lineLength + 2
        return line
    }

    /// The line's bytes as text (invalid UTF-8 repaired, as `String(decoding:as:)` does).
    private func text(_ buffer: ByteBuffer, _ line: Range<Int>) -> String {
        buffer.getString(at: line.lowerBound, length: line.count) ?? ""
    }

    /// The line as a decimal integer: an optional sign, then at least one digit, within `Int64`
    /// (what `Int64.init(_: String)` accepts), read from the buffer without making a string.
    private func integer(_ buffer: ByteBuffer, _ line: Range<Int>) throws(RedisError) -> Int64 {
        guard let view = buffer.viewBytes(at: line.lowerBound, length: line.count), let value = Self.decimal(view)
        else {
            throw .protocolViolation("\"\(text(buffer, line.prefix(40)))\" is not an integer")
        }
        return value
    }

    /// `digits` as an `Int64`, or nil unless it is an optional `+` or `-` followed by decimal
    /// digits only, in range. Negative numbers accumulate downwards, so `Int64.min` is in range.
    static func decimal(_ digits: some Collection<UInt8>) -> Int64? {
        var bytes = digits[...]
        let isNegative = bytes.first == UInt8(ascii: "-")
        if isNegative || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        guard !bytes.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in bytes {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, overflowed) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowedAgain) =
                isNegative
                ? shifted.subtractingReportingOverflow(Int64(digit)) : shifted.addingReportingOverflow(Int64(digit))
            guard !overflowed, !overflowedAgain else { return nil }
            value = next
        }
        return value
    }
}
