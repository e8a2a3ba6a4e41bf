import CacheSimulation
import FuzzDriver
import Foundation

/// Every trace reader (ARC .lis, LIRS text, cache2k binary, libCacheSim oracleGeneral and CSV,
/// plain) and the zstd, gzip and xz decoders in front of them. The first byte picks the format
/// and the compression; the rest is the file, written to a RAM-backed temporary file because the
/// readers stream from files.
@_cdecl("FuzzTraceReaders_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    runFuzzer(argc, argv) { data, size in
        let input = bytes(data, size)
        guard let selector = input.first else { return 0 }
        let formats = TraceFormat.allCases
        let format = formats[Int(selector) % formats.count]
        let compression = ["", ".zst", ".gz", ".xz"][Int(selector >> 4) % 4]
        let directory = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        let path = "\(directory)/tiercache-fuzz-\(getpid())\(compression)"
        guard FileManager.default.createFile(atPath: path, contents: Data(input.dropFirst())) else { return 0 }
        defer { unlink(path) }
        guard let reader = try? TraceReader(path: path, format: format) else { return 0 }
        var count = 0
        // A damaged file must end in a TraceError, never a trap; stop early on long valid input.
        try? reader.forEach(while: { _ in
            count += 1
            return count < 100_000
        })
        return 0
    }
}
