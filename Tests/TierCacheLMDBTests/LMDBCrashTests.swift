import DiskTestSupport
import Foundation
import Testing
import TierCache
import TierCacheLMDB

@Suite("LMDBTier across processes and crashes")
struct LMDBCrashTests {
    @Test(
        "A writer killed with SIGKILL mid-write leaves every committed entry readable (one thread; 8 threads sharing group commits)",
        arguments: [1, 8])
    func sigkillMidWrite(writers: Int) throws {
        let directory = TemporaryDirectory()
        // Several writers commit out of order: every reported number counts.
        let (committed, killed) = try killWriterAfterCommits(
            [directory.url.path, "--writers", String(writers)], count: 300)
        #expect(killed)
        try #require(committed.count >= 300, "the writer stopped early")

        let tier = try LMDBTier(directory: directory.url, capacity: 64 << 20)
        #expect(!tier.didResetDamagedStore)
        for index in committed {
            let found = try tier.entry(forKey: key("entry-\(index)"))
            #expect(found?.value == crashWriterValue(index), "entry \(index), one of \(committed.count) committed")
            if found?.value != crashWriterValue(index) { break }
        }
        #expect(try tier.usage().entries >= Set(committed).count)
    }

    @Test("Two processes share one store: entries written by one are read by the other")
    func twoProcesses() throws {
        let directory = TemporaryDirectory()
        let reader = try LMDBTier(directory: directory.url, capacity: 64 << 20)
        let process = Process()
        process.executableURL = try harnessExecutable()
        process.arguments = ["crash-writer", directory.url.path, "--count", "50"]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        for index in 0..<50 {
            #expect(try reader.entry(forKey: key("entry-\(index)"))?.value == crashWriterValue(index))
        }
        // And this process's writes go into the same store, accounted once.
        _ = try reader.store(entry([1]), forKey: key("from-parent"))
        #expect(try reader.usage().entries == 51)
    }
}
