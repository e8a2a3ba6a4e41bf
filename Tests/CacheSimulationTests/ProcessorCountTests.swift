import Foundation
import Testing

@testable import CacheSimulation

/// Replays run one per processor the process may use: on Linux its affinity mask, as `nproc`
/// counts it (the online count ignored `taskset` and a container's `cpuset`).
@Suite struct ProcessorCountTests {
    #if os(Linux)
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset"), "needs taskset"))
    func theCountIsTheAffinityMasks() throws {
        let process = Process()
        // Under `taskset -c 0`, one processor whatever the machine has.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/taskset")
        process.arguments = ["-c", "0", "/bin/cat", "/proc/self/status"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let status = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let mask = try #require(status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed:") })
        #expect(ProcessInfoLite.allowedProcessors(inStatusLine: String(mask)) == 1)
        // This process's own, as `nproc` counts it.
        let nproc = Process()
        nproc.executableURL = URL(fileURLWithPath: "/usr/bin/nproc")
        // (nproc also heeds OMP_NUM_THREADS and OMP_THREAD_LIMIT.)
        nproc.environment = [:]
        let count = Pipe()
        nproc.standardOutput = count
        try nproc.run()
        let expected = Int(
            String(decoding: count.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines))
        nproc.waitUntilExit()
        #expect(ProcessInfoLite.allowedProcessors() == expected)
        #expect(ProcessInfoLite.activeProcessorCount == expected)
    }
    #endif
}
