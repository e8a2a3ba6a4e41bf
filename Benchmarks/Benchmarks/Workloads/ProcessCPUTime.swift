#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's CPU time so far (`getrusage`), for figures per operation that the machine's
/// wake-up noise moves less than the rate: on this VM there are no hardware counters for
/// `perf stat`, and valgrind cannot run the Swift binaries.
public struct ProcessCPUTime: Sendable {
    /// User time, in microseconds.
    public let user: Double
    /// System time, in microseconds.
    public let system: Double

    /// The time used so far.
    public static var now: ProcessCPUTime {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        return ProcessCPUTime(
            user: Double(usage.ru_utime.tv_sec) * 1e6 + Double(usage.ru_utime.tv_usec),
            system: Double(usage.ru_stime.tv_sec) * 1e6 + Double(usage.ru_stime.tv_usec))
    }

    /// User and system time together, in microseconds.
    public var total: Double { user + system }
}
