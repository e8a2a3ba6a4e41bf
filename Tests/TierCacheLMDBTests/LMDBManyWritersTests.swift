import Crypto
import DiskTestSupport
import Foundation
import Testing
@_spi(TierCacheInternals) import TierCache
import TierCacheEncryption
import TierCacheLMDB

/// Several processes, each with several tasks, storing and reading one LMDB store at once: LMDB
/// serialises the writers across processes, and the tier's eviction, accounting and recovery
/// from a full map must hold under that.
@Suite("LMDBTier with many writers")
struct LMDBManyWritersTests {
    /// Seconds the writers run: 5 by default (CI); `TIERCACHE_WRITERS_SECONDS=30` for the long run.
    static var seconds: Double {
        ProcessInfo.processInfo.environment["TIERCACHE_WRITERS_SECONDS"].flatMap(Double.init) ?? 5
    }

    @Test("4 processes x 4 tasks on one store: no error, no value but one written for its key, never over capacity")
    func fourProcessesFourTasks() throws {
        let directory = TemporaryDirectory()
        let store = directory.url.appendingPathComponent("store").path
        // 4 MiB against 20,000 keys of 0.1-2.1 KB: the store is full within a second, so most of
        // the run evicts while other processes read and write. Each task stores at least 100
        // times, past the seconds if the disk is slow (enough that every writer reads what
        // others wrote).
        let common = ["--capacity", String(4 << 20), "--keys", "20000", "--tasks", "4", "--minimum-stores", "100"]
        var storesInAll = 0
        for (status, text) in try runStressWriters(
            store: store, processes: 4, seconds: String(Self.seconds), arguments: common)
        {
            print(text, terminator: "")
            let (problems, stores) = stressWriterProblems(status: status, output: text, capacity: 4 << 20)
            #expect(problems.isEmpty, "\(problems): \(text)")
            storesInAll += stores
        }
        // Enough work to matter even on a slow machine (here a 5 s run makes about 2,000 stores,
        // filling the store to its budget).
        #expect(storesInAll > 200, "\(storesInAll) stores")

        let verify = Process()
        verify.executableURL = try harnessExecutable()
        verify.arguments = ["stress", store, "--verify-only"] + common
        let output = Pipe()
        verify.standardOutput = output
        try verify.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        verify.waitUntilExit()
        #expect(verify.terminationStatus == 0, "\(text)")
        #expect((outcomeFields(text)["found"] ?? 0) > 100, "\(text)")
    }

    /// Runs `body(thread)` on `threads` threads at once (real threads: the concurrency pool has
    /// only as many as there are cores, and group commit needs stores in flight together).
    private func onThreads(_ threads: Int, _ body: @escaping @Sendable (Int) -> Void) throws {
        let done = DispatchGroup()
        for thread in 0..<threads {
            done.enter()
            Thread {
                body(thread)
                done.leave()
            }.start()
        }
        try #require(done.wait(timeout: .now() + 300) == .success)
    }

    @Test("16 threads storing at once into a large store: every store is answered stored and reads back")
    func sixteenThreadsEveryEntryKept() throws {
        let directory = TemporaryDirectory()
        let tier = try LMDBTier(directory: directory.url, capacity: 256 << 20)
        let failures = Locked<[String]>([])
        try onThreads(16) { thread in
            for number in 0..<100 {
                let name = "t\(thread)-\(number)"
                do {
                    let outcome = try tier.store(entry(Array("value of \(name)".utf8)), forKey: key(name))
                    if outcome != .stored { failures.withLock { $0.append("\(name): \(outcome)") } }
                } catch {
                    failures.withLock { $0.append("\(name): \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        for thread in 0..<16 {
            for number in 0..<100 {
                let name = "t\(thread)-\(number)"
                #expect(try tier.entry(forKey: key(name))?.value == Array("value of \(name)".utf8))
            }
        }
        #expect(try tier.usage().entries == 1_600)
        #expect(tier.statistics().stores == 1_600)
    }

    @Test(
        "8 threads storing small responses with automatic dictionaries and encryption: one training at a time, every value reads back"
    )
    func concurrentStoresWhileTraining() throws {
        let directory = TemporaryDirectory()
        let encryption = try EncryptionAtRest(currentKey: .init(id: 1, key: SymmetricKey(size: .bits256)))
        let tier = try LMDBTier(
            directory: directory.url,
            configuration: .init(
                capacity: 64 << 20, dictionary: .automatic(LMDBDictionaryTests.training), encryption: encryption,
                durability: .none))
        let values = LMDBDictionaryTests.responses(800)
        let failures = Locked<[String]>([])
        try onThreads(8) { thread in
            for index in stride(from: thread, to: values.count, by: 8) {
                do {
                    let outcome = try tier.store(entry(values[index]), forKey: key("r\(index)"))
                    if outcome != .stored { failures.withLock { $0.append("r\(index): \(outcome)") } }
                    if try tier.entry(forKey: key("r\(index)"))?.value != values[index] {
                        failures.withLock { $0.append("r\(index): read back wrong") }
                    }
                } catch {
                    failures.withLock { $0.append("r\(index): \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        // 800 responses of about 1 KiB fill the 128 KiB ring several times, but they do not drift:
        // one dictionary, trained once, whatever the interleaving.
        #expect(try tier.storedDictionaries().count == 1)
        for (index, value) in values.enumerated() { #expect(try tier.entry(forKey: key("r\(index)"))?.value == value) }
        #expect(try tier.verify().isSound)
    }

    @Test(
        "16 threads storing at once into a store that fills: never over budget, every value whole and one its writers wrote, the store sound"
    )
    func sixteenThreadsIntoAFullStore() throws {
        let directory = TemporaryDirectory()
        let capacity = 2 << 20
        let failures = Locked<[String]>([])
        do {
            let tier = try LMDBTier(directory: directory.url, capacity: capacity)
            try onThreads(16) { thread in
                for number in 0..<150 {
                    // 64 shared keys, written by every thread: batches hold the same key twice.
                    let name = "k\(number % 64)"
                    do {
                        _ = try tier.store(
                            entry(Self.sharedKeyValue(key: number % 64, thread: thread, number: number)),
                            forKey: key(name))
                        let usage = try tier.usage()
                        if usage.bytes > Int(Double(capacity) * LMDBTier.fillLimit) {
                            failures.withLock { $0.append("over budget: \(usage.bytes)") }
                        }
                    } catch {
                        failures.withLock { $0.append("\(name): \(error)") }
                    }
                }
            }
            #expect(failures.withLock { $0 }.isEmpty)
        }
        // Every value found is whole, and one a writer wrote for that key.
        let reopened = try LMDBTier(directory: directory.url, capacity: capacity)
        #expect(!reopened.didResetDamagedStore)
        var found = 0
        for keyNumber in 0..<64 {
            guard let stored = try reopened.entry(forKey: key("k\(keyNumber)")) else { continue }
            found += 1
            // The header's words, split on spaces in the bytes (what follows is not text).
            let fields = stored.value.prefix(32).split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
                .prefix(4).map { String(decoding: $0, as: UTF8.self) }
            let thread = fields.count == 4 ? Int(fields[2]) : nil
            let number = fields.count == 4 ? Int(fields[3].dropFirst()) : nil
            let expected = thread.flatMap { thread in
                number.map { Self.sharedKeyValue(key: keyNumber, thread: thread, number: $0) }
            }
            #expect(stored.value == expected, "k\(keyNumber)")
        }
        #expect(found > 0)
        #expect(try reopened.verify().isSound)
    }

    /// "k<key> from <thread> #<number> " and then 1,000 + 7 × number incompressible bytes.
    private static func sharedKeyValue(key: Int, thread: Int, number: Int) -> [UInt8] {
        Array("k\(key) from \(thread) #\(number) ".utf8) + incompressible(1_000 + number * 7, seed: UInt64(number + 1))
    }
}
