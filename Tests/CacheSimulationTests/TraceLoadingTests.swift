import Foundation
import Testing

@testable import CacheSimulation

@Suite struct TraceLoadingTests {
    /// Dense ids are the order of first appearance, whatever the keys look like: runs of neighbouring
    /// blocks, keys that are all multiples of 4096 (byte offsets), the extremes of UInt64, and enough
    /// keys to make the table grow many times. The reference is a plain Dictionary.
    @Test(arguments: ["runs", "aligned", "extremes", "random"])
    func idsFollowFirstAppearance(shape: String) {
        var state: UInt64 = 42
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
        var keys: [UInt64] = []
        switch shape {
        case "runs":
            for run in 0..<2_000 {
                let start = UInt64(run * 13 % 701) * 64
                for offset in 0..<UInt64(run % 37 + 1) { keys.append(start + offset) }
            }
        case "aligned":
            for _ in 0..<60_000 { keys.append((next() >> 44) * 4096) }
        case "extremes":
            keys = [0, UInt64.max, 1, UInt64.max - 1, 0, UInt64.max, 1 << 63, 15, 16, 17, 1 << 63]
        default:
            for _ in 0..<60_000 { keys.append(next() >> 45) }
        }
        var reference: [UInt64: UInt32] = [:]
        var table = DenseIDTable(minimumCapacity: 4)
        for key in keys {
            let expected = reference[key] ?? UInt32(reference.count)
            let isNew = reference[key] == nil
            reference[key] = expected
            let (id, assigned) = table.id(for: key)
            #expect(id == expected && assigned == isNew, "key \(key)")
        }
        #expect(table.count == reference.count)
    }

    /// A trace past the most requests it may hold (2^31 - 1, which the exact LRU curve and MIN
    /// number in 32 bits; 5 here) is refused at the first request past it, by the request and by
    /// the chunk, naming that request: not loaded whole, then refused (or trapped on) later.
    @Test func requestsPastTheMaximumAreRefusedWhereTheyStart() throws {
        let requests = (0..<8).map { TraceRequest(key: UInt64($0 % 3)) }
        var single = Trace.Builder(maximumRequests: 5)
        for request in requests.prefix(5) { try single.append(request, file: "t") }
        let one = #expect(throws: TraceError.self) { try single.append(requests[5], file: "t") }
        #expect(one?.record == 6, "\(String(describing: one))")
        var chunked = Trace.Builder(maximumRequests: 5)
        let many = #expect(throws: TraceError.self) {
            try requests.withUnsafeBufferPointer { try chunked.append(contentsOf: $0, file: "t") }
        }
        #expect(many?.record == 6 && chunked.requests.count == 5, "\(String(describing: many))")
        #expect(Trace.maximumRequestCount == Int(Int32.max))
    }

    /// The chunked numbering (prefetching ahead, the table grown before a chunk) gives the ids of
    /// a plain Dictionary and the largest size of each key, chunk after chunk.
    @Test func chunkedNumberingMatchesADictionary() {
        var state: UInt64 = 7
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state
        }
        let requests = (0..<50_000).map { _ in TraceRequest(key: next() >> 48, size: UInt32(next() >> 54) + 1) }
        var referenceIDs: [UInt64: UInt32] = [:]
        var referenceSizes: [UInt32] = []
        var expected: [UInt32] = []
        for request in requests {
            if let id = referenceIDs[request.key] {
                referenceSizes[Int(id)] = max(referenceSizes[Int(id)], request.size)
                expected.append(id)
            } else {
                referenceIDs[request.key] = UInt32(referenceSizes.count)
                expected.append(UInt32(referenceSizes.count))
                referenceSizes.append(request.size)
            }
        }
        var table = DenseIDTable(minimumCapacity: 4)
        var sizes: [UInt32] = []
        var smallest = UInt32.max
        var numbered: [UInt32] = []
        for chunkStart in stride(from: 0, to: requests.count, by: 3_000) {
            let chunk = Array(requests[chunkStart..<min(requests.count, chunkStart + 3_000)])
            var output = [UInt32](repeating: .max, count: chunk.count)
            chunk.withUnsafeBufferPointer { chunk in
                output.withUnsafeMutableBufferPointer { output in
                    table.number(chunk, into: output, sizes: &sizes, smallestSize: &smallest)
                }
            }
            numbered += output
        }
        #expect(numbered == expected)
        #expect(sizes == referenceSizes)
        #expect(smallest == referenceSizes.min())
        #expect(table.count == referenceIDs.count)
    }

    private func arcTrace(_ fixtures: TraceFixtures) throws -> String {
        try fixtures.write("small.lis", text: "100 3 0 1\n5 2 0 2\n100 1 0 3\n7 1 0 4\n")
    }

    /// A parsed trace leaves a binary copy; the next load reads the copy and gets the same trace.
    @Test func theBinaryCopyReadsBackAsTheParsedTrace() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try arcTrace(fixtures)
        let cache = TraceCache(directory: fixtures.directory.appendingPathComponent("copies/nested").path)
        let parsed = try Trace.load(TraceReader(path: path), cache: cache)
        #expect(parsed.loading?.source == .parsed)
        #expect(parsed.loading?.storeFailure == nil)
        // 100 101 102 5 6 100 7 as pages of 512 bytes: ids by first appearance.
        #expect(parsed.requests == [0, 1, 2, 3, 4, 0, 5])
        let copy = try Trace.load(TraceReader(path: path), cache: cache)
        #expect(copy.loading?.source == .binaryCopy)
        #expect(copy.requests == parsed.requests && copy.objectSizes == parsed.objectSizes)
        #expect(copy.hasSizes == parsed.hasSizes && copy.requestedBytes == parsed.requestedBytes)
        #expect(copy.footprintBytes == parsed.footprintBytes && copy.name == parsed.name)
        // A limit is another trace: it gets a copy of its own.
        let limited = try Trace.load(TraceReader(path: path), limit: 4, cache: cache)
        #expect(limited.loading?.source == .parsed && limited.requests == [0, 1, 2, 3])
        #expect(try Trace.load(TraceReader(path: path), limit: 4, cache: cache).requests == [0, 1, 2, 3])
        #expect(try Trace.load(TraceReader(path: path), cache: cache).requests.count == 7)
    }

    /// The copies stay within the cache's bound: a store removes the least recently used others
    /// (a load counts as a use), never the copy it wrote.
    @Test func copiesBeyondTheBoundGoLeastRecentlyUsedFirst() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try arcTrace(fixtures)
        let directory = fixtures.directory.appendingPathComponent("copies").path
        let unbounded = TraceCache(directory: directory)
        let limits: [Int?] = [2, 3, nil, 1]
        let copies = try limits.map { try unbounded.path(for: TraceReader(path: path), limit: $0).path }
        for limit in limits.prefix(3) { _ = try Trace.load(TraceReader(path: path), limit: limit, cache: unbounded) }
        // Last used 300, 200 and 100 seconds ago; then a load of the first marks it used now.
        var now = timespec()
        try #require(clock_gettime(CLOCK_REALTIME, &now) == 0)
        for (copy, age) in zip(copies, [300, 200, 100]) {
            var then = now
            then.tv_sec -= age
            var times = [then, then]
            try #require(utimensat(AT_FDCWD, copy, &times, 0) == 0)
        }
        #expect(try Trace.load(TraceReader(path: path), limit: 2, cache: unbounded).loading?.source == .binaryCopy)
        // Room for the copies of limits 2 (112 bytes) and 1 (104): storing the second removes the
        // copies of limit 3 (used 200 s ago) and of the whole trace (100 s ago).
        let bounded = TraceCache(directory: directory, maximumBytes: 230)
        #expect(try Trace.load(TraceReader(path: path), limit: 1, cache: bounded).loading?.source == .parsed)
        #expect(copies.map { FileStatus(path: $0) != nil } == [true, false, false, true])
        // A copy larger than the bound alone is still kept, the others removed.
        _ = try Trace.load(TraceReader(path: path), cache: TraceCache(directory: directory, maximumBytes: 0))
        #expect(copies.map { FileStatus(path: $0) != nil } == [false, false, true, false])
    }

    /// A copy whose source changed is not used: the new contents are parsed.
    @Test func aChangedSourceIsParsedAgain() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try arcTrace(fixtures)
        let cache = TraceCache(directory: fixtures.directory.appendingPathComponent("copies").path)
        _ = try Trace.load(TraceReader(path: path), cache: cache)
        _ = try fixtures.write("small.lis", text: "9 2 0 1\n")
        let reloaded = try Trace.load(TraceReader(path: path), cache: cache)
        #expect(reloaded.loading?.source == .parsed)
        #expect(reloaded.requests == [0, 1] && reloaded.objectCount == 2)
    }

    /// A source replaced by contents of the same size with its old modification time (as `cp -p`,
    /// `rsync -t`, `tar x` and `curl -R` leave it) is parsed again: its status change time moved.
    @Test func aSourceReplacedWithItsOldTimeIsParsedAgain() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try arcTrace(fixtures)
        let cache = TraceCache(directory: fixtures.directory.appendingPathComponent("copies").path)
        _ = try Trace.load(TraceReader(path: path), cache: cache)
        let copied = try #require(FileStatus(path: path))
        var original = stat()
        try #require(stat(path, &original) == 0)
        #if canImport(Darwin)
        var times = [original.st_atimespec, original.st_mtimespec]
        #else
        var times = [original.st_atim, original.st_mtim]
        #endif
        // Rewritten in place (the same inode) until the clock the kernel stamps status changes
        // with has moved on (it ticks every few milliseconds on Linux before 6.13): a rewrite
        // within the copy's tick is one no stat(2) field can tell apart.
        var rewrites = 0
        repeat {
            _ = try fixtures.write("small.lis", text: "200 3 0 1\n5 2 0 2\n100 1 0 3\n7 1 0 4\n")
            try #require(utimensat(AT_FDCWD, path, &times, 0) == 0)
            rewrites += 1
        } while FileStatus(path: path)?.statusChanged == copied.statusChanged && rewrites < 100_000
        let replaced = try #require(FileStatus(path: path))
        try #require(replaced.statusChanged != copied.statusChanged)
        #expect(replaced.size == copied.size && replaced.modified == copied.modified && replaced.inode == copied.inode)
        let reloaded = try Trace.load(TraceReader(path: path), cache: cache)
        #expect(reloaded.loading?.source == .parsed)
        #expect(reloaded.objectCount == 7, "200 201 202 5 6 100 7: \(reloaded.objectCount)")
    }

    /// A copy is stored only while the file is as it was before parsing (`Trace.load` passes the
    /// status it took then): a file written on meanwhile would give a copy carrying its final
    /// size and time with only what was read, taken for the whole file ever after.
    @Test func aSourceChangedWhileReadGetsNoCopy() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try arcTrace(fixtures)
        let cache = TraceCache(directory: fixtures.directory.appendingPathComponent("copies").path)
        let reader = try TraceReader(path: path)
        let before = try #require(FileStatus(path: path))
        let parsed = try Trace.load(reader)
        _ = try fixtures.write("small.lis", text: "9 2 0 1\n1 1 0 2\n")
        #expect(throws: TraceCache.StoreError.self) { try cache.store(parsed, for: reader, limit: nil, source: before) }
        #expect(cache.load(reader, limit: nil) == nil)
    }

    /// A pipe or device has no size or time that says what it will yield: it is never given a
    /// copy (two runs reading different data from `/dev/stdin` would share one), and a CSV or
    /// plain trace in one, which loading reads twice, is refused with a reason.
    @Test func pipesGetNoCopyAndPlainTracesInThemAreRefused() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        /// A pipe named `name` that a thread writes `text` into once a reader opens it.
        func pipe(_ name: String, writing text: String) throws -> String {
            let path = fixtures.directory.appendingPathComponent(name).path
            try #require(mkfifo(path, 0o600) == 0)
            Thread {
                let handle = FileHandle(forWritingAtPath: path)
                handle?.write(Data(text.utf8))
                try? handle?.close()
            }.start()
            return path
        }
        let fifo = try pipe("fifo.txt", writing: "a\nb\na\n")
        let error = #expect(throws: TraceError.self) {
            try Trace.load(TraceReader(path: fifo), cache: TraceCache(directory: fixtures.directory.path + "/copies"))
        }
        #expect(error.map { "\($0)".contains("save it to a file first") } == true, "\(String(describing: error))")
        // The writer is still waiting for a reader if the refusal came before any open.
        if let reader = FileHandle(forReadingAtPath: fifo) { _ = reader.readDataToEndOfFile() }

        // An ARC trace is read once: it loads from a pipe, and leaves no copy.
        let arcFifo = try pipe("fifo.lis", writing: "100 2 0 1\n7 1 0 2\n")
        let copies = fixtures.directory.appendingPathComponent("arc-copies").path
        let trace = try Trace.load(TraceReader(path: arcFifo), cache: TraceCache(directory: copies))
        #expect(trace.requests == [0, 1, 2])
        #expect(trace.loading?.storeFailure?.contains("not a regular file") == true)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: copies))?.isEmpty ?? true)
    }

    /// Damage to a copy (a flipped byte anywhere, a truncation, an id forged out of range with a
    /// matching checksum impossible to hit by chance) is never read as a trace: it is parsed again.
    @Test(arguments: [
        "flip header", "flip has sizes", "flip requested bytes", "flip requests", "flip sizes", "truncate", "extend",
        "empty",
    ])
    func aDamagedCopyIsParsedAgain(damage: String) throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try arcTrace(fixtures)
        let cache = TraceCache(directory: fixtures.directory.appendingPathComponent("copies").path)
        let parsed = try Trace.load(TraceReader(path: path), cache: cache)
        let copyPath = cache.path(for: try TraceReader(path: path), limit: nil).path
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: copyPath)))
        let header = TraceCache.headerWords * 8
        switch damage {
        case "flip header": bytes[36] ^= 0x01  // the request count
        case "flip has sizes": bytes[48] ^= 0x01
        case "flip requested bytes": bytes[56] ^= 0x01
        case "flip requests": bytes[header + 5] ^= 0x80
        case "flip sizes": bytes[bytes.count - 2] ^= 0x01
        case "truncate": bytes.removeLast(3)
        case "extend": bytes += [0, 0, 0, 0]
        default: bytes = []
        }
        try Data(bytes).write(to: URL(fileURLWithPath: copyPath))
        let reloaded = try Trace.load(TraceReader(path: path), cache: cache)
        #expect(reloaded.loading?.source == .parsed)
        #expect(reloaded.requests == parsed.requests && reloaded.objectSizes == parsed.objectSizes)
        #expect(reloaded.hasSizes == parsed.hasSizes && reloaded.requestedBytes == parsed.requestedBytes)
    }

    /// A copy being written is a temporary named for its writer's process; one whose writer was
    /// killed (a Ctrl-C while a large trace's copy was written) is removed by the next store of
    /// that copy, and one whose writer still runs is left.
    @Test func temporariesOfWritersKilledMeanwhileAreRemoved() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try arcTrace(fixtures)
        let copies = fixtures.directory.appendingPathComponent("copies").path
        let cache = TraceCache(directory: copies)
        _ = try Trace.load(TraceReader(path: path), cache: cache)
        let copy = try #require(try FileManager.default.contentsOfDirectory(atPath: copies).first)
        // A process that has ended, and one that runs as long as the system does.
        let ended = Process()
        ended.executableURL = URL(fileURLWithPath: "/bin/true")
        try ended.run()
        ended.waitUntilExit()
        let abandoned = TraceCache.temporaryPrefix(of: copies + "/" + copy) + "\(ended.processIdentifier)"
        let running = TraceCache.temporaryPrefix(of: copies + "/" + copy) + "1"
        for temporary in [abandoned, running] { try Data("partial".utf8).write(to: URL(fileURLWithPath: temporary)) }
        try cache.store(try Trace.load(TraceReader(path: path)), for: TraceReader(path: path), limit: nil)
        #expect(!FileManager.default.fileExists(atPath: abandoned))
        #expect(FileManager.default.fileExists(atPath: running))
    }

    /// A cache directory that cannot be created does not stop the load; the report says why.
    @Test func anUnwritableCacheIsReportedNotFatal() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try arcTrace(fixtures)
        let blocker = try fixtures.write("not-a-directory", text: "x")
        let trace = try Trace.load(TraceReader(path: path), cache: TraceCache(directory: blocker + "/copies"))
        #expect(trace.requests.count == 7)
        #expect(trace.loading?.source == .parsed)
        #expect(trace.loading?.storeFailure?.contains("cannot create") == true)
        let summary = Report.simulation(trace: trace, unit: .objects, results: [], seconds: 0).summary
        #expect(summary.contains { $0.0 == "Load time" && $0.1.contains("parsed") })
    }
}
