#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Streams the requests of a trace file, in any ``TraceFormat``, compressed or not.
///
/// Reading is streaming: memory stays at a few MiB however long the trace is. Damaged, truncated or
/// malformed input ends the read with a ``TraceError`` naming the file and the record.
///
/// ```swift
/// let reader = try TraceReader(path: "traces/arc/OLTP.lis.zst")
/// var count = 0
/// try reader.forEach { _ in count += 1 }
/// ```
public struct TraceReader: Sendable {
    /// The trace file.
    public let path: String
    /// The trace's format.
    public let format: TraceFormat

    /// How the readers parse, as a number: change it with any change to what a format's bytes
    /// read as, and the binary copies made by earlier builds (``TraceCache``), which hold what
    /// those read, are parsed again and replaced instead of used. Revision 2: a plain trace's zero-padded
    /// integer keys are names (`007` and `7` are two objects), spaced fields are a key, a size
    /// and a time, and a byte order mark is not part of the first key. Revision 3: records of
    /// size 0 in oracleGeneral and CSV traces are not requests (they counted as 1 byte).
    static let parsingRevision = 3

    /// A reader of the trace file at `path`; nothing is read until the trace is loaded.
    /// - Parameters:
    ///   - path: the trace file, compressed (zstd, gzip, xz) or not.
    ///   - format: the trace's format; guessed from the file name when nil
    ///     (``TraceFormat/guess(fromFileName:)``), and an error when it cannot be guessed.
    public init(path: String, format: TraceFormat? = nil) throws(TraceError) {
        guard let format = format ?? TraceFormat.guess(fromFileName: path) else {
            throw TraceError(
                file: path,
                reason: .unknownFormat(
                    "cannot tell the trace format from the file name; name one (\(TraceFormat.allCases.map(\.rawValue).joined(separator: ", ")))"
                ))
        }
        self.path = path
        self.format = format
    }

    /// Calls `body` with every request, in order.
    public func forEach(_ body: (TraceRequest) throws(TraceError) -> Void) throws(TraceError) {
        try forEach(while: { request throws(TraceError) in
            try body(request)
            return true
        })
    }

    /// Calls `body` with the requests, in order, until it returns false.
    public func forEach(while body: (TraceRequest) throws(TraceError) -> Bool) throws(TraceError) {
        let reader = try DecompressingFileReader(path: path)
        switch format {
        case .arc: try readARC(reader, body)
        case .lirs: try readLIRS(reader, body)
        case .cache2k: try readCache2k(reader, body)
        case .oracleGeneral: try readOracleGeneral(reader, body)
        case .csv: try readCSV(reader, body)
        case .plain: try readPlain(reader, body)
        }
    }

    /// Whether this file's requests carry object sizes: always for ARC and `oracleGeneral`, never
    /// for LIRS and cache2k; for CSV, whether the header names a size column; for the plain format,
    /// whether the first request gives one (then every request must). An empty file carries none.
    ///
    /// Reads only up to the CSV header or the first plain request. Without sizes every object
    /// counts as 1 byte, so a byte-mode simulation is refused and a benchmark draws its own sizes.
    ///
    /// - Throws: for a CSV or plain trace in a pipe or device (`/dev/stdin`), which cannot be read
    ///   again after this look at its start; save it to a file first.
    public func requestsCarrySizes() throws(TraceError) -> Bool {
        switch format {
        case .arc, .oracleGeneral: return true
        case .lirs, .cache2k: return false
        case .csv, .plain: break
        }
        if let status = FileStatus(path: path), !status.isRegularFile {
            throw TraceError(
                file: path,
                reason: .unreadable(
                    status.isDirectory
                        // As reading one says for the other formats.
                        ? String(cString: strerror(EISDIR))
                        : "a \(format) trace is read twice (its first line says whether it has sizes), and a pipe or device cannot be; save it to a file first"
                ))
        }
        var carrySizes = false
        var fields: [UnsafeBufferPointer<UInt8>] = []
        try LineScanner(reader: DecompressingFileReader(path: path)).forEachLine { line, number throws(TraceError) in
            if format == .csv {
                if ASCIIFields.trimmingSpaces(line).isEmpty { return true }
                ASCIIFields.splitCSV(line, into: &fields)
                carrySizes = try csvColumns(fields, line: line, number: number).size != nil
            } else {
                let trimmed = ASCIIFields.trimmingSpaces(line)
                if trimmed.isEmpty || trimmed[0] == UInt8(ascii: "#") { return true }
                ASCIIFields.splitPlain(trimmed, spaced: ASCIIFields.plainIsSpaced(trimmed), into: &fields)
                carrySizes = fields.count > 1
            }
            return false
        }
        return carrySizes
    }

    private func malformed(_ line: Int, _ message: String) -> TraceError {
        TraceError(file: path, record: line, reason: .malformed(message))
    }

    private func readARC(
        _ reader: DecompressingFileReader, _ body: (TraceRequest) throws(TraceError) -> Bool
    ) throws(TraceError) {
        let separators = (UInt8(ascii: " "), UInt8(ascii: "\t"))
        try LineScanner(reader: reader).forEachLine { line, number throws(TraceError) in
            // Only the first two fields count (the rest, request numbers, are ignored).
            var cursor = 0
            guard let first = ASCIIFields.nextField(of: line, from: &cursor, separators: separators) else {
                return true
            }
            let second = ASCIIFields.nextField(of: line, from: &cursor, separators: separators)
            guard let second, let start = ASCIIFields.unsigned(first), let blocks = ASCIIFields.unsigned(second) else {
                throw malformed(number, "expected `start_block n_blocks ...`, found \"\(ASCIIFields.text(line))\"")
            }
            guard blocks <= 1 << 24, start <= UInt64.max - blocks else {
                throw malformed(number, "a run of \(blocks) blocks from \(start) is out of range")
            }
            for page in 0..<blocks {
                guard try body(TraceRequest(key: start + page, size: 512)) else { return false }
            }
            return true
        }
    }

    private func readLIRS(
        _ reader: DecompressingFileReader, _ body: (TraceRequest) throws(TraceError) -> Bool
    ) throws(TraceError) {
        try LineScanner(reader: reader).forEachLine { line, number throws(TraceError) in
            let field = ASCIIFields.trimmingSpaces(line)
            if field.isEmpty || field[0] == UInt8(ascii: "*") { return true }
            guard let key = ASCIIFields.unsigned(field) else {
                throw malformed(number, "expected a block number, found \"\(ASCIIFields.text(line))\"")
            }
            return try body(TraceRequest(key: key))
        }
    }

    private func readCache2k(
        _ reader: DecompressingFileReader, _ body: (TraceRequest) throws(TraceError) -> Bool
    ) throws(TraceError) {
        // A text trace read as binary keys is wrong without an error when its length is a
        // multiple of 4 (an LIRS trace compressed as `x.trace.xz`, a name that guesses cache2k):
        // its first records are read as text too, and refused if they are all digits and spaces.
        var textSoFar = true
        try RecordScanner(reader: reader, recordSize: 4).forEachRecord { record, number throws(TraceError) in
            if textSoFar, number <= Self.textProbeRecords {
                // An LIRS trace's `*` marker lines count as text too.
                textSoFar = record.allSatisfy { ASCIIFields.isDecimalTextByte($0) || $0 == UInt8(ascii: "*") }
                if textSoFar, number == Self.textProbeRecords {
                    throw TraceError(
                        file: path, record: 1,
                        reason: .malformed(
                            "this reads as text (digits and line breaks), not cache2k's binary keys: name the format (--format lirs for an LIRS trace)"
                        ))
                }
            }
            let key = UInt32(bigEndian: record.loadUnaligned(as: UInt32.self))
            return try body(TraceRequest(key: UInt64(key)))
        }
    }

    /// How many leading records of a cache2k trace are checked for text: 16 bytes each a digit,
    /// white space or `*` (15 values of 256) come by chance once in about 10^19 binary traces.
    static let textProbeRecords = 4

    private func readOracleGeneral(
        _ reader: DecompressingFileReader, _ body: (TraceRequest) throws(TraceError) -> Bool
    ) throws(TraceError) {
        try RecordScanner(reader: reader, recordSize: 24).forEachRecord { record, _ throws(TraceError) in
            let time = UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
            let key = UInt64(littleEndian: record.loadUnaligned(fromByteOffset: 4, as: UInt64.self))
            let size = UInt32(littleEndian: record.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
            // Not a request, as libCacheSim reads it (`ignore_size_zero_req`, its default).
            guard size > 0 else { return true }
            return try body(TraceRequest(key: key, size: size, timestamp: UInt64(time)))
        }
    }

    private func readCSV(
        _ reader: DecompressingFileReader, _ body: (TraceRequest) throws(TraceError) -> Bool
    ) throws(TraceError) {
        var fields: [UnsafeBufferPointer<UInt8>] = []
        var columns: (key: Int, size: Int?, time: Int?)?
        try LineScanner(reader: reader).forEachLine { line, number throws(TraceError) in
            if ASCIIFields.trimmingSpaces(line).isEmpty { return true }
            ASCIIFields.splitCSV(line, into: &fields)
            guard let layout = columns else {
                columns = try csvColumns(fields, line: line, number: number)
                return true
            }
            guard fields.count > layout.key, let key = ASCIIFields.unsigned(fields[layout.key]) else {
                throw malformed(
                    number, "expected an integer key in column \(layout.key + 1), found \"\(ASCIIFields.text(line))\"")
            }
            var request = TraceRequest(key: key)
            if let column = layout.size {
                guard fields.count > column, let size = ASCIIFields.unsigned(fields[column]), size <= UInt32.max else {
                    throw malformed(
                        number,
                        "expected a size (at most \(UInt32.max)) in column \(column + 1), found \"\(ASCIIFields.text(line))\""
                    )
                }
                // Not a request, as libCacheSim reads it (`ignore_size_zero_req`, its default).
                guard size > 0 else { return true }
                request.size = UInt32(size)
            }
            if let column = layout.time, fields.count > column, let time = ASCIIFields.unsigned(fields[column]) {
                request.timestamp = time
            }
            return try body(request)
        }
    }

    /// The names a CSV key column may have, the most specific first.
    static let csvKeyColumns = ["obj_id", "key", "lbn", "id"]

    /// The columns a CSV header names (line `number`, split into `fields`).
    private func csvColumns(
        _ fields: [UnsafeBufferPointer<UInt8>], line: UnsafeBufferPointer<UInt8>, number: Int
    ) throws(TraceError) -> (key: Int, size: Int?, time: Int?) {
        let names = fields.map { ASCIIFields.text($0).lowercased() }
        // By the names' priority, not the columns' order: in `id,obj_id,obj_size` the `id` is a
        // row number, and taking it made every request another object (a hit ratio of 0).
        guard let key = Self.csvKeyColumns.lazy.compactMap({ names.firstIndex(of: $0) }).first else {
            throw malformed(
                number, "the CSV header names no key column (lbn, obj_id, key or id): \"\(ASCIIFields.text(line))\"")
        }
        return (
            key, names.firstIndex(where: { ["size", "obj_size"].contains($0) }),
            names.firstIndex(where: { ["time", "timestamp"].contains($0) })
        )
    }

    private func readPlain(
        _ reader: DecompressingFileReader, _ body: (TraceRequest) throws(TraceError) -> Bool
    ) throws(TraceError) {
        var fields: [UnsafeBufferPointer<UInt8>] = []
        // Whether the first request gave a size: the rest must agree (`requestsCarrySizes()`),
        // since a trace whose sizes are partly missing would be measured in two units at once.
        var carriesSizes: Bool?
        // Whether fields are separated by spaces, from the first request (`ASCIIFields.plainIsSpaced`).
        var spaced: Bool?
        try LineScanner(reader: reader).forEachLine { line, number throws(TraceError) in
            let trimmed = ASCIIFields.trimmingSpaces(line)
            if trimmed.isEmpty || trimmed[0] == UInt8(ascii: "#") { return true }
            let isSpaced = spaced ?? ASCIIFields.plainIsSpaced(trimmed)
            spaced = isSpaced
            ASCIIFields.splitPlain(trimmed, spaced: isSpaced, into: &fields)
            guard fields.count <= 3, !fields[0].isEmpty else {
                throw malformed(
                    number,
                    "expected `key[,size[,timestamp]]` or `key size timestamp`, found \"\(ASCIIFields.text(line))\"")
            }
            let givesSize = fields.count > 1
            if let carriesSizes, carriesSizes != givesSize {
                throw malformed(
                    number,
                    carriesSizes
                        ? "no size, where the first request gives one (give every request a size, or none): \"\(ASCIIFields.text(line))\""
                        : "a size, where the first request gives none (give every request a size, or none): \"\(ASCIIFields.text(line))\""
                )
            }
            carriesSizes = givesSize
            var request = TraceRequest(key: ASCIIFields.plainKey(fields[0]))
            if fields.count > 1 {
                guard let size = ASCIIFields.unsigned(fields[1]), size >= 1, size <= UInt32.max else {
                    throw malformed(
                        number,
                        "the size must be an integer from 1 to \(UInt32.max), found \"\(ASCIIFields.text(fields[1]))\"")
                }
                request.size = UInt32(size)
            }
            if fields.count > 2 {
                // Seconds with a fraction (`1700000000.25`, as many recorders write them) count
                // whole: replays do not use times.
                guard let time = ASCIIFields.unsignedWholePart(fields[2]) else {
                    throw malformed(
                        number,
                        "the timestamp must be a non-negative number (`1700000000` or `1700000000.25`), found \"\(ASCIIFields.text(fields[2]))\""
                    )
                }
                request.timestamp = time
            }
            return try body(request)
        }
    }
}
