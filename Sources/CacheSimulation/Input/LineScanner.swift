#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits a decompressed byte stream into lines, handing each to a closure without copying it.
///
/// `\n` ends a line and a `\r` before it is dropped (some traces have CRLF endings); the last line
/// needs no terminator. Lines longer than `maximumLineLength` are reported as malformed rather than
/// buffered without bound.
struct LineScanner {
    static let maximumLineLength = 1 << 16

    let reader: DecompressingFileReader

    /// Calls `body` with each line and its 1-based number until it returns false.
    func forEachLine(_ body: (UnsafeBufferPointer<UInt8>, Int) throws(TraceError) -> Bool) throws(TraceError) {
        var buffer = [UInt8](repeating: 0, count: DecompressingFileReader.chunkSize + Self.maximumLineLength)
        var carried = 0  // bytes of an unfinished line kept at the start of `buffer`
        var lineNumber = 0
        try buffer.withUnsafeMutableBufferPointer { storage throws(TraceError) in
            guard let base = storage.baseAddress else { return }
            while true {
                let free = UnsafeMutableRawBufferPointer(
                    start: base + carried, count: DecompressingFileReader.chunkSize)
                let produced = try reader.read(into: free)
                let end = carried + produced
                var lineStart = 0
                var index = carried
                // memchr finds the line ends (vectorised: a byte loop here was a fifth of parsing
                // a trace of short lines).
                while index < end, let newline = memchr(base + index, Int32(UInt8(ascii: "\n")), end - index) {
                    index = newline.assumingMemoryBound(to: UInt8.self) - base
                    lineNumber += 1
                    let line = Self.trimmed(base, from: lineStart, to: index, number: lineNumber)
                    guard try body(line, lineNumber) else { return }
                    index += 1
                    lineStart = index
                }
                carried = end - lineStart
                if produced == 0 {
                    if carried > 0 {
                        lineNumber += 1
                        _ = try body(Self.trimmed(base, from: lineStart, to: end, number: lineNumber), lineNumber)
                    }
                    return
                }
                guard carried <= Self.maximumLineLength else {
                    throw TraceError(
                        file: reader.path, record: lineNumber + 1,
                        reason: .malformed("a line is longer than \(Self.maximumLineLength) bytes"))
                }
                if carried > 0, lineStart > 0 {
                    memmove(base, base + lineStart, carried)
                }
            }
        }
    }

    /// Line `number`, from `start` to `end` in `base`, without its carriage return, and the first
    /// without a UTF-8 byte order mark (editors on Windows write one): kept, it made the first key
    /// another object, or a CSV header name no column.
    private static func trimmed(
        _ base: UnsafeMutablePointer<UInt8>, from start: Int, to end: Int, number: Int
    ) -> UnsafeBufferPointer<UInt8> {
        var start = start, end = end
        if end > start, base[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        if number == 1, end - start >= 3, base[start] == 0xEF, base[start + 1] == 0xBB, base[start + 2] == 0xBF {
            start += 3
        }
        return UnsafeBufferPointer(start: base + start, count: end - start)
    }
}

/// Splits a decompressed byte stream into fixed-size binary records.
struct RecordScanner {
    let reader: DecompressingFileReader
    let recordSize: Int

    /// Calls `body` with each record and its 1-based number until it returns false; a partial record
    /// at the end is an error.
    func forEachRecord(_ body: (UnsafeRawBufferPointer, Int) throws(TraceError) -> Bool) throws(TraceError) {
        let capacity = (DecompressingFileReader.chunkSize / recordSize + 1) * recordSize
        var buffer = [UInt8](repeating: 0, count: capacity)
        var filled = 0
        var recordNumber = 0
        try buffer.withUnsafeMutableBufferPointer { storage throws(TraceError) in
            guard let typedBase = storage.baseAddress else { return }
            let base = UnsafeMutableRawPointer(typedBase)
            while true {
                let produced = try reader.read(
                    into: UnsafeMutableRawBufferPointer(start: base + filled, count: capacity - filled))
                filled += produced
                var offset = 0
                while filled - offset >= recordSize {
                    recordNumber += 1
                    guard try body(UnsafeRawBufferPointer(start: base + offset, count: recordSize), recordNumber) else {
                        return
                    }
                    offset += recordSize
                }
                let left = filled - offset
                if produced == 0 {
                    if left > 0 {
                        throw TraceError(
                            file: reader.path, record: recordNumber + 1,
                            reason: .truncated(
                                "the last record has \(left) of \(recordSize) bytes (if the file is text, such as an LIRS `.trace.xz`, name its format)"
                            ))
                    }
                    return
                }
                if left > 0, offset > 0 { memmove(base, base + offset, left) }
                filled = left
            }
        }
    }
}
