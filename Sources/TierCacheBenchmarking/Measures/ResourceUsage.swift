import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's memory and a directory's size on disk, measured after a run.
enum ResourceUsage {
    /// The resident set size in bytes: `/proc/self/statm` on Linux; the peak (`ru_maxrss`)
    /// elsewhere, the one figure every platform gives.
    static func residentBytes() -> Int? {
        #if os(Linux)
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        #else
        var usage = rusage()
        guard getrusage(RUSAGE_SELF, &usage) == 0 else { return nil }
        return Int(usage.ru_maxrss)  // bytes on Darwin
        #endif
    }

    /// The bytes the files under `directory` occupy on disk (allocated blocks, so a sparse
    /// file counts what it holds, not its length).
    static func diskBytes(under directory: URL) -> Int {
        guard let walker = FileManager.default.enumerator(atPath: directory.path) else { return 0 }
        var total = 0
        while let relative = walker.nextObject() as? String {
            var status = stat()
            guard stat(directory.appendingPathComponent(relative).path, &status) == 0,
                status.st_mode & S_IFMT == S_IFREG
            else { continue }
            total += Int(status.st_blocks) * 512
        }
        return total
    }
}
