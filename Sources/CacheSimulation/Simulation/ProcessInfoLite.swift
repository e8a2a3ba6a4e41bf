#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The processor count without importing Foundation into the simulator.
enum ProcessInfoLite {
    /// The processors this process may run on: on Linux those of its affinity mask (`taskset`, a
    /// container's `cpuset`), which the online count ignores, so that replays sized by it do not
    /// outnumber the cores they share; elsewhere the online processors.
    static var activeProcessorCount: Int {
        let online = max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        #if os(Linux)
        guard let allowed = allowedProcessors(), allowed > 0 else { return online }
        return min(online, allowed)
        #else
        return online
        #endif
    }

    #if os(Linux)
    /// The bits set in `Cpus_allowed` of `/proc/self/status` (a hexadecimal mask, in groups of 8
    /// digits separated by commas), or nil when it cannot be read. (`sched_getaffinity` is not
    /// in the Glibc module: it needs `_GNU_SOURCE`.)
    static func allowedProcessors() -> Int? {
        guard let file = fopen("/proc/self/status", "r") else { return nil }
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        while getline(&line, &capacity, file) > 0, let line {
            if let count = allowedProcessors(inStatusLine: String(cString: line)) { return count }
        }
        return nil
    }

    /// The bits set in a `Cpus_allowed:` line's mask; nil for another line.
    static func allowedProcessors(inStatusLine line: String) -> Int? {
        guard line.hasPrefix("Cpus_allowed:") else { return nil }
        return line.dropFirst("Cpus_allowed:".count).reduce(0) { $0 + ($1.hexDigitValue?.nonzeroBitCount ?? 0) }
    }
    #endif
}
