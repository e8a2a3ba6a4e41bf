import Foundation
import FuzzDriver

@testable import CacheSimulation

/// Every trace reader (ARC .lis, LIRS text, cache2k binary, libCacheSim oracleGeneral and CSV,
/// plain) and the zstd, gzip and xz decoders in front of them, and the binary copies of parsed
/// traces (`TraceCache`). The first byte picks the format and the compression, or (its top bit
/// set) a binary copy; the rest is the file, written to a RAM-backed temporary file because the
/// readers stream from files.
///
/// A binary copy is read only when its header names its source (identity, size, modification
/// time) and its checksum matches, so random bytes would stop at the first check. This harness
/// builds that much structure: a header for a real source file, with the fuzzed counts and arrays
/// behind it and, when the second byte is odd, their correct checksum, so that the length checks
/// and the range check of every id are reached.
@_cdecl("FuzzTraceReaders_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { data, size in
        let input = bytes(data, size)
        guard let selector = input.first else { return 0 }
        let directory = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        if selector & 0x80 != 0 {
            fuzzBinaryCopy(Array(input.dropFirst()), directory: directory)
            return 0
        }
        let formats = TraceFormat.allCases
        let format = formats[Int(selector) % formats.count]
        let compression = ["", ".zst", ".gz", ".xz"][Int(selector >> 4) % 4]
        let path = "\(directory)/tiercache-fuzz-\(getpid())\(compression)"
        guard FileManager.default.createFile(atPath: path, contents: Data(input.dropFirst())) else { return 0 }
        defer { unlink(path) }
        guard let reader = try? TraceReader(path: path, format: format) else { return 0 }
        var count = 0
        // A damaged file must end in a TraceError, never a trap. Stop early on long valid input: an
        // ARC run of 2^24 blocks is valid, and expanding it would cost each input milliseconds.
        try? reader.forEach(while: { _ in
            count += 1
            return count < 1_000
        })
        return 0
    }
}

/// Reads a binary copy made of a valid header for a real source and fuzzed counts and arrays.
private func fuzzBinaryCopy(_ input: [UInt8], directory: String) {
    guard input.count >= 17 else { return }
    let source = "\(directory)/tiercache-fuzz-source-\(getpid()).txt"
    guard FileManager.default.createFile(atPath: source, contents: Data("1\n".utf8)) else { return }
    defer { unlink(source) }
    let cache = TraceCache(directory: "\(directory)/tiercache-fuzz-copies-\(getpid())")
    guard let reader = try? TraceReader(path: source, format: .plain) else { return }
    // Make the copy of the real one-request trace, then replace its counts, sizes flag and
    // checksum and its arrays with fuzzed ones.
    guard let parsed = try? Trace.load(reader, cache: cache), parsed.requestCount == 1 else { return }
    let path = cache.path(for: reader, limit: nil).path
    defer {
        unlink(path)
        rmdir(cache.directory)
    }
    guard var copy = try? [UInt8](Data(contentsOf: URL(fileURLWithPath: path))),
        copy.count >= TraceCache.headerWords * 8
    else { return }
    // The real copy's header words as stored (little-endian), of which the counts, the sizes
    // flag, the requested bytes and the checksum (words 4 to 8) are replaced; the source's status
    // and the parsing revision (words 9 to 11) stay, so that the copy is taken as current.
    var header = (0..<TraceCache.headerWords).map { index in
        copy[index * 8..<index * 8 + 8].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    }
    let counts = input[1..<17].withUnsafeBytes {
        (
            $0.loadUnaligned(fromByteOffset: 0, as: UInt64.self) % 64,
            $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self) % 64
        )
    }
    let payload = Array(input.dropFirst(17))
    header[4] = counts.0.littleEndian
    header[5] = counts.1.littleEndian
    header[6] = (UInt64(payload.first ?? 0) & 1).littleEndian
    header[7] = 0
    header[8] = 0
    if input[0] & 1 == 1 {
        let requestBytes = min(payload.count, Int(counts.0) * 4)
        let requests = stride(from: 0, to: requestBytes - 3, by: 4).map { offset in
            payload[offset..<offset + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        }
        let rest = Array(payload.dropFirst(requestBytes))
        let sizes = stride(from: 0, to: rest.count - 3, by: 4).map { offset in
            rest[offset..<offset + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        }
        header[8] = TraceCache.checksum(header: header, requests, sizes).littleEndian
    }
    copy = []
    for word in header { withUnsafeBytes(of: word) { copy += $0 } }
    copy += payload
    guard FileManager.default.createFile(atPath: path, contents: Data(copy)) else { return }
    if let trace = cache.load(reader, limit: nil) {
        // What a copy hands out must be safe to replay: every id names an object.
        for request in trace.requests where Int(request) >= trace.objectCount {
            fatalError("id \(request) out of range")
        }
    }
}
