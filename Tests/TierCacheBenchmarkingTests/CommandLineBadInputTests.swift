import DiskTestSupport
import Foundation
import Testing

/// The `tiercache` tool refuses options that once trapped it (a crash, not a message): the
/// process exits with a status and says what is wrong.
@Suite struct CommandLineBadInputTests {
    @Test(
        arguments: [
            (["bench", "--distribution", "scan:nan:0.2"], "whole number of keys"),
            (["bench", "--distribution", "scan:inf:0.2"], "whole number of keys"),
            (["bench", "--distribution", "scan:-inf:0.2"], "whole number of keys"),
            (["bench", "--distribution", "scan:1e20:0.2"], "whole number of keys"),
            (["bench", "--distribution", "scan:2.5:0.2"], "whole number of keys"),
            (["bench", "--duration", "1e16s"], "at most a year"),
            (["bench", "--duration", "1e300h"], "at most a year"),
            (["tune", "--trace", "/nonexistent/trace.csv", "--miniature-minimum-objects", "inf"], "from 1 to"),
            (["tune", "--trace", "/nonexistent/trace.csv", "--miniature-minimum-objects", "1e19"], "from 1 to"),
            (["tune", "--trace", "/nonexistent/trace.csv", "--miniature-minimum-objects", "nan"], "from 1 to"),
        ])
    func outOfRangeNumbersAreRefusedWithAMessage(_ arguments: [String], _ message: String) throws {
        // A trap ends the process by a signal, before any message.
        let (status, output) = try runTiercache(arguments)
        #expect(status != 0)
        #expect(output.contains(message), "\(output)")
    }

    /// A trace of comments alone once simulated to hit ratios of 0% and a footprint of "inf%".
    @Test(arguments: ["simulate", "tune"])
    func aTraceWithoutRequestsIsRefused(command: String) throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let path = directory.url.appendingPathComponent("empty.txt").path
        try Data("# no requests\n".utf8).write(to: URL(fileURLWithPath: path))
        let (status, output) = try runTiercache([command, "--trace", path, "--no-trace-cache"])
        #expect(status != 0)
        #expect(output.contains("holds no requests"), "\(output)")
    }

    /// A hotspot over one key once drew key 1 of 1 and trapped indexing the value sizes.
    @Test func aHotspotOverOneKeyRuns() throws {
        let (status, output) = try runTiercache([
            "bench", "--tiers", "memory", "--keys", "1", "--distribution", "hotspot", "--requests", "500", "--tasks",
            "1", "--no-baselines",
        ])
        #expect(status == 0, "\(output)")
    }
}
