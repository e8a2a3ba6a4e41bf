import DiskTestSupport
import Foundation
import Testing
import TierCache
import TierCacheLMDB

@Suite("LMDBTier across processes and crashes")
struct LMDBCrashTests {
    /// The value `tiercache-harness crash-writer` writes for `index` (see CrashWriterCommand).
    func writerValue(_ index: Int) -> [UInt8] {
        Array(String(repeating: "value \(index) ", count: 1 + index % 50).utf8)
    }

    @Test(
        "A writer killed with SIGKILL mid-write leaves every committed entry readable (one thread; 8 threads sharing group commits)",
        arguments: [1, 8])
    func sigkillMidWrite(writers: Int) throws {
        let directory = TemporaryDirectory()
        let process = Process()
        process.executableURL = try harnessExecutable()
        process.arguments = ["crash-writer", directory.url.path, "--writers", String(writers)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()

        // Read the writer's reports until it has committed a few hundred entries, then kill it
        // while it is writing more. Several writers commit out of order: every reported number counts.
        var committed: [Int] = []
        var buffer = ""
        while committed.count < 300 {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            buffer += String(decoding: chunk, as: UTF8.self)
            while let newline = buffer.firstIndex(of: "\n") {
                let line = buffer[..<newline]
                buffer = String(buffer[buffer.index(after: newline)...])
                if line.hasPrefix("committed "), let number = Int(line.dropFirst("committed ".count)) {
                    committed.append(number)
                }
            }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        try #require(committed.count >= 300, "the writer stopped early")
        // Lines reported after the last read count too: they were committed before the kill.
        buffer += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        for line in buffer.split(separator: "\n") where line.hasPrefix("committed ") {
            if let number = Int(line.dropFirst("committed ".count)) { committed.append(number) }
        }

        let tier = try LMDBTier(directory: directory.url, capacity: 64 << 20)
        #expect(!tier.didResetDamagedStore)
        for index in committed {
            let found = try tier.entry(forKey: key("entry-\(index)"))
            #expect(found?.value == writerValue(index), "entry \(index), one of \(committed.count) committed")
            if found?.value != writerValue(index) { break }
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
            #expect(try reader.entry(forKey: key("entry-\(index)"))?.value == writerValue(index))
        }
        // And this process's writes go into the same store, accounted once.
        _ = try reader.store(entry([1]), forKey: key("from-parent"))
        #expect(try reader.usage().entries == 51)
    }
}
