import Foundation
import Testing

@testable import CacheSimulation

@Suite struct TraceReaderTests {
    @Test func arcRunsExpandIntoConsecutivePagesFromEveryCompression() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let expected = [100, 101, 102, 5, 100].map { TraceRequest(key: $0, size: 512) }
        let plain = try fixtures.write("a.lis", text: "100 3 0 1\n5 1 0 2\n100 1 0 3\n")
        #expect(try TraceFixtures.requests(plain) == expected)
        #expect(try TraceFixtures.requests(fixtures.write("a.lis.xz", TraceFixtures.arcXz)) == expected)
        #expect(try TraceFixtures.requests(fixtures.write("a.lis.zst", TraceFixtures.arcZstd)) == expected)
        // The codec comes from the magic number, not the name.
        #expect(try TraceFixtures.requests(fixtures.write("renamed.lis", TraceFixtures.arcZstd)) == expected)
    }

    /// The ARC format is `start_block n_blocks ignored ignored`: fields split by any run of spaces
    /// or tabs, only the first two read, blank lines skipped.
    @Test func arcFieldsSplitOnAnyRunOfSpacesOrTabs() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let text = "  100\t 2   0 1\r\n\t\n   \n7 1\n9\t\t1\t0\t0 extra fields\n"
        let path = try fixtures.write("spaced.lis", text: text)
        #expect(try TraceFixtures.requests(path).map(\.key) == [100, 101, 7, 9])
        for (bad, line) in [("1 1 0 1\n42\n", 2), ("1 1\n \t 5 \t\n", 2), ("1 -2 0 0\n", 1), ("1 2x\n", 1)] {
            let error = #expect(throws: TraceError.self, "\(bad.debugDescription)") {
                try TraceFixtures.requests(fixtures.write("bad.lis", text: bad))
            }
            #expect(error?.record == line, "\(bad.debugDescription)")
        }
    }

    @Test func lirsSkipsMarkersBlankLinesAndCarriageReturns() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try fixtures.write("x.trace.gz", TraceFixtures.lirsGzip)
        #expect(try TraceFixtures.requests(path).map(\.key) == [7, 8, 7, 9])
    }

    @Test func cache2kKeysAreBigEndianInt32() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try fixtures.write("c.trace", [0, 0, 1, 0, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(try TraceFixtures.requests(path, format: .cache2k).map(\.key) == [256, 0xFFFF_FFFF])
    }

    /// One oracleGeneral record: time, object id, size and next access, little-endian.
    private static func oracleGeneralRecord(time: UInt32, id: UInt64, size: UInt32) -> [UInt8] {
        var record: [UInt8] = []
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { record += $0 } }
        append(time)
        append(id)
        append(size)
        append(Int64(-1))
        return record
    }

    @Test func oracleGeneralRecordsAreLittleEndian() throws {
        let record = Self.oracleGeneralRecord(time: 17, id: 0xABCDEF, size: 4096)
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try fixtures.write("t.oracleGeneral.bin", record + record)
        #expect(
            try TraceFixtures.requests(path) == [
                TraceRequest(key: 0xABCDEF, size: 4096, timestamp: 17),
                TraceRequest(key: 0xABCDEF, size: 4096, timestamp: 17),
            ])
    }

    /// Records of size 0 counted as 1-byte requests (3 requests, 2 hits where libCacheSim, which
    /// skips them by default, has 1 request and none).
    @Test("Records of size 0 are not requests, in oracleGeneral and CSV traces, as libCacheSim reads them")
    func sizeZeroRecordsAreSkipped() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let records =
            Self.oracleGeneralRecord(time: 1, id: 5, size: 100) + Self.oracleGeneralRecord(time: 2, id: 5, size: 0)
            + Self.oracleGeneralRecord(time: 3, id: 5, size: 0)
        #expect(
            try TraceFixtures.requests(fixtures.write("z.oracleGeneral.bin", records)) == [
                TraceRequest(key: 5, size: 100, timestamp: 1)
            ])
        let csv = try fixtures.write("z.csv", text: "key,size\n5,100\n5,0\n6,0\n")
        #expect(try TraceFixtures.requests(csv) == [TraceRequest(key: 5, size: 100)])
    }

    /// A binary trace whose first bytes are gzip's two magic bytes is read as itself: its first
    /// timestamp, 35,615, is `1F 8B 00 00` little-endian, and it was refused as damaged gzip.
    @Test func aBinaryTraceOpeningWithGzipsMagicBytesIsNotGzip() throws {
        let record = Self.oracleGeneralRecord(time: 35_615, id: 1, size: 100)
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try fixtures.write("t.oracleGeneral.bin", record)
        #expect(try TraceFixtures.requests(path) == [TraceRequest(key: 1, size: 100, timestamp: 35_615)])
        // A cache2k trace whose first key is 0x1F8B0800: not a gzip header either (its extra
        // flags, the ninth byte, are no deflate level).
        let keys: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 5, 0x63, 0, 0, 7]
        let cache2k = try fixtures.write("k.trace", keys)
        #expect(try TraceFixtures.requests(cache2k, format: .cache2k).map(\.key) == [0x1F8B_0800, 5, 0x6300_0007])
        // Real gzip still reads, whatever operating system its header names (zlib writes 19 on
        // Apple platforms).
        #expect(try TraceFixtures.requests(fixtures.write("x.trace.gz", TraceFixtures.lirsGzip)).count == 4)
        var fromAMac = TraceFixtures.lirsGzip
        fromAMac[9] = 19
        #expect(try TraceFixtures.requests(fixtures.write("mac.trace.gz", fromAMac)).count == 4)
    }

    /// A dump of a binary trace as text, named `w.oracleGeneral.txt`, is read as text: it was
    /// read as 24-byte records (one garbage request for these 24 bytes).
    @Test func anOracleGeneralTextDumpIsReadAsText() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try fixtures.write("w.oracleGeneral.txt", text: "1,100\n2,100\n3,100\n4,100\n")
        #expect(try TraceFixtures.requests(path).map(\.key) == [1, 2, 3, 4])
    }

    @Test func csvFindsItsColumnsByHeader() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try fixtures.write("t.csv", text: "version,time,op,size,lbn\n1,10,0x2a,4096,77\n1,11,0x28,512,78\n")
        #expect(
            try TraceFixtures.requests(path) == [
                TraceRequest(key: 77, size: 4096, timestamp: 10), TraceRequest(key: 78, size: 512, timestamp: 11),
            ])
        // A row number named `id` before the object's id: the object's id is the key.
        let numbered = try fixtures.write("n.csv", text: "id,obj_id,obj_size\n1,5,10\n2,5,10\n3,6,20\n")
        #expect(
            try TraceFixtures.requests(numbered) == [
                TraceRequest(key: 5, size: 10), TraceRequest(key: 5, size: 10), TraceRequest(key: 6, size: 20),
            ])
    }

    /// A UTF-8 byte order mark before the first line is not part of the first key, nor of a CSV
    /// header's first name.
    @Test func aByteOrderMarkIsNotPartOfTheFirstLine() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let plain = try fixtures.write("bom.txt", [0xEF, 0xBB, 0xBF] + Array("/a\n/a\n".utf8))
        let keys = try TraceFixtures.requests(plain).map(\.key)
        #expect(keys.count == 2 && keys[0] == keys[1])
        let csv = try fixtures.write("bom.csv", [0xEF, 0xBB, 0xBF] + Array("key,size\n7,2\n".utf8))
        #expect(try TraceFixtures.requests(csv) == [TraceRequest(key: 7, size: 2)])
    }

    @Test func plainTakesIntegerOrStringKeysWithOptionalSizeAndTime() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let sized = try fixtures.write(
            "t.txt", text: "# a comment\n42,7\n/img/logo.png,2048\n\n42,10,99\n/img/logo.png,3")
        let requests = try TraceFixtures.requests(sized)
        #expect(requests.map(\.key)[0] == 42 && requests[2] == TraceRequest(key: 42, size: 10, timestamp: 99))
        #expect(requests[1].key == requests[3].key && requests[1].size == 2048 && requests[3].size == 3)
        let keysOnly = try fixtures.write("k.txt", text: "42\n/img/logo.png\n42\n")
        #expect(try TraceFixtures.requests(keysOnly).map(\.size) == [1, 1, 1])
    }

    /// Timestamps with a fraction, as recorders write epoch seconds, failed the whole load at
    /// line 1 ("must be a non-negative integer"), though replays never read them.
    @Test("A plain trace's timestamp may have a fraction; a sign or an exponent is an error")
    func plainTimestampsMayHaveAFraction() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try fixtures.write("f.txt", text: "k,100,1700000000.25\nk,100,1700000001.\nk,100,7\n")
        #expect(try TraceFixtures.requests(path).map(\.timestamp) == [1_700_000_000, 1_700_000_001, 7])
        for bad in ["k,100,-5", "k,100,1e9", "k,100,.5", "k,100,1.2.3"] {
            #expect(throws: TraceError.self, "\(bad)") {
                try TraceFixtures.requests(fixtures.write("b.txt", text: bad + "\n"))
            }
        }
    }

    /// Zero-padded integers (ZIP codes, SKUs) are names: `007`, `7` and `0007` are three objects,
    /// where reading each as the integer 7 merged them and raised the hit ratio. `0` is an integer.
    @Test func plainZeroPaddedKeysAreNamesNotIntegers() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let keys = try TraceFixtures.requests(fixtures.write("z.txt", text: "007\n7\n0007\n0\n007\n")).map(\.key)
        #expect(keys[1] == 7 && keys[3] == 0)
        #expect(Set(keys.prefix(4)).count == 4 && keys[4] == keys[0])
    }

    /// The layout of many published traces, `key size timestamp` with spaces or tabs, reads as
    /// fields, not as one string key (its sizes were lost and every line was another object).
    @Test func plainFieldsMaySeparateBySpacesOrTabs() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try fixtures.write("spaced.txt", text: "obj1 4096 1700000001\nobj1\t4096\t1700000002\n7  10  3\n")
        let requests = try TraceFixtures.requests(path)
        #expect(requests.count == 3)
        #expect(
            requests[0].key == requests[1].key && requests[0].size == 4096 && requests[1].timestamp == 1_700_000_002)
        #expect(requests[2] == TraceRequest(key: 7, size: 10, timestamp: 3))
        #expect(try TraceReader(path: path).requestsCarrySizes())
        #expect(try Trace.load(TraceReader(path: path)).objectCount == 2)
        // Decided by the first request: then a line of four fields is malformed.
        let malformed = try fixtures.write("four.txt", text: "a 1 2\na 1 2 3\n")
        #expect(throws: TraceError.self) { try TraceFixtures.requests(malformed) }
        // Keys holding spaces, as before: the first request has no integers after its key.
        let keys = try fixtures.write("keys.txt", text: "GET /a b\nGET /a b\nuser 42\n")
        let read = try TraceFixtures.requests(keys)
        #expect(read.count == 3 && read[0].key == read[1].key && read[2].key != read[0].key)
        #expect(try !TraceReader(path: keys).requestsCarrySizes())
        // A timestamp with a fraction reads whole; one that is no number is an error naming it,
        // not one key a line.
        let decimal = try fixtures.write("decimal.txt", text: "k 4096 1617.25\n")
        #expect(try TraceFixtures.requests(decimal).map(\.timestamp) == [1617])
        let garbled = try fixtures.write("garbled.txt", text: "k 4096 16x7\n")
        let error = #expect(throws: TraceError.self) { try TraceFixtures.requests(garbled) }
        #expect(error.map { "\($0)".contains("timestamp") } == true)
    }

    /// Whether a trace has sizes is the file's, not the format's: a CSV trace without a size
    /// column, or a plain one of keys alone, has none, so that its objects are not taken for
    /// 1-byte objects in byte mode or in a benchmark.
    @Test func csvAndPlainTracesHaveSizesOnlyWhenTheFileGivesThem() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let cases: [(String, String, Bool)] = [
            ("sized.csv", "key,size\n1,10\n", true), ("unsized.csv", "time,key\n5,1\n", false),
            ("sized.txt", "# sizes\n\na,10\n", true), ("unsized.txt", "a\nb\n", false),
            ("empty.txt", "# nothing\n", false), ("empty.csv", "", false),
        ]
        for (name, text, carriesSizes) in cases {
            let reader = try TraceReader(path: fixtures.write(name, text: text))
            #expect(try reader.requestsCarrySizes() == carriesSizes, "\(name)")
            #expect(try Trace.load(reader).hasSizes == carriesSizes, "\(name)")
        }
        #expect(try TraceReader(path: fixtures.write("x.lis", text: "1 1\n")).requestsCarrySizes())
        #expect(try !TraceReader(path: fixtures.write("x.trace", text: "1\n")).requestsCarrySizes())
        // A byte-mode simulation needs sizes.
        let unsized = try Trace.load(TraceReader(path: fixtures.write("keys.txt", text: "a\nb\na\n")))
        #expect(throws: Simulator.UnitError.self) { try Simulator(trace: unsized, unit: .bytes) }
    }

    /// A plain trace gives every request a size or none: the line that breaks with the first
    /// request's choice is an error, named.
    @Test func plainTracesWithSizesOnSomeLinesOnlyAreErrors() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        for (text, line) in [("a,10\nb,20\nc\n", 3), ("# keys\na\nb,20\n", 3)] {
            let error = #expect(throws: TraceError.self, "\(text.debugDescription)") {
                try TraceFixtures.requests(fixtures.write("mixed.txt", text: text))
            }
            #expect(error?.record == line, "\(text.debugDescription)")
            #expect(error.map { "\($0)".contains("give every request a size, or none") } == true)
        }
    }

    @Test func malformedLinesNameTheFileAndLine() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try fixtures.write("bad.lis", text: "1 1 0 1\n2 x 0 2\n")
        let error = #expect(throws: TraceError.self) { try TraceFixtures.requests(path) }
        #expect(error?.record == 2 && error?.file == path)
        #expect(error.map { "\($0)".contains("bad.lis, record 2") } == true)
        let plain = try fixtures.write("bad.txt", text: "1,0\n")
        #expect(throws: TraceError.self) { try TraceFixtures.requests(plain) }
        let csv = try fixtures.write("nokey.csv", text: "time,size\n1,2\n")
        #expect(throws: TraceError.self) { try TraceFixtures.requests(csv) }
    }

    /// An LIRS trace compressed as `loop.trace.xz` is guessed to be cache2k's; a length of a
    /// multiple of 4 bytes read it as keys, every hit ratio wrong and no error.
    @Test func textReadAsCache2kIsRefused() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try fixtures.write("loop.trace", text: "1\n2\n3\n4\n10\n11\n12\n13\n")  // 24 bytes
        let error = #expect(throws: TraceError.self) { try TraceFixtures.requests(path, format: .cache2k) }
        #expect(error?.description.contains("--format lirs") == true, "\(String(describing: error))")
        #expect(try TraceFixtures.requests(path, format: .lirs).map(\.key) == [1, 2, 3, 4, 10, 11, 12, 13])
        // With an LIRS marker line among the first bytes (it passed for binary, 4 keys read).
        let marked = try fixtures.write("marked.trace", text: "*\n1\n2\n3\n4\n10\n11\n")  // 16 bytes
        #expect(throws: TraceError.self) { try TraceFixtures.requests(marked, format: .cache2k) }
    }

    @Test func truncatedBinaryRecordsAreReported() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try fixtures.write("short.trace", [0, 0, 0, 1, 0, 0])
        let error = #expect(throws: TraceError.self) { try TraceFixtures.requests(path, format: .cache2k) }
        #expect(error?.record == 2)
        if case .truncated = error?.reason {
        } else {
            Issue.record("expected .truncated, got \(String(describing: error))")
        }
    }

    @Test(arguments: ["zst", "xz", "gz"])
    func everyTruncationOfACompressedFileFailsCleanly(codec: String) throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let bytes =
            codec == "zst" ? TraceFixtures.arcZstd : codec == "xz" ? TraceFixtures.arcXz : TraceFixtures.lirsGzip
        for length in 1..<bytes.count {
            let path = try fixtures.write("cut.lis.\(codec)", Array(bytes.prefix(length)))
            // Either an error, or (for a cut inside the trailer only) every request: never a crash.
            do { _ = try TraceFixtures.requests(path, format: codec == "gz" ? .lirs : .arc) } catch {}
        }
        let damaged = bytes.enumerated().map { $0.offset == bytes.count / 2 ? $0.element ^ 0xFF : $0.element }
        let path = try fixtures.write("damaged.\(codec)", damaged)
        #expect(throws: TraceError.self) { try TraceFixtures.requests(path, format: codec == "gz" ? .lirs : .arc) }
    }

    /// Zero bytes after the last gzip member are padding, as GNU gzip and Python read them, not a
    /// damaged member.
    @Test func zeroPaddingAfterAGzipMemberIsSkipped() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let plain = try TraceFixtures.requests(fixtures.write("x.trace.gz", TraceFixtures.lirsGzip))
        let padded = try fixtures.write("padded.trace.gz", TraceFixtures.lirsGzip + [UInt8](repeating: 0, count: 512))
        #expect(try TraceFixtures.requests(padded) == plain)
        let twice = try fixtures.write(
            "twice.trace.gz", TraceFixtures.lirsGzip + [0, 0, 0] + TraceFixtures.lirsGzip)
        #expect(try TraceFixtures.requests(twice) == plain + plain)
        let garbage = try fixtures.write("garbage.trace.gz", TraceFixtures.lirsGzip + [0, 0, 7])
        #expect(throws: TraceError.self) { try TraceFixtures.requests(garbage) }
    }

    /// A zstd frame whose header asks for a 256 MiB window (`zstd --long=28` from a pipe) reads;
    /// one asking for 1 GiB is refused with what to do, not called damaged without a reason.
    @Test func zstdWindowsUpTo256MiBRead() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        // A frame: magic, a descriptor with no content size, the window descriptor (exponent
        // windowLog - 10, no mantissa), then one raw block, the last, of "1\n2\n".
        func frame(windowLog: UInt8) -> [UInt8] {
            [0x28, 0xB5, 0x2F, 0xFD, 0x00, (windowLog - 10) << 3, 4 << 3 | 1, 0, 0] + Array("1\n2\n".utf8)
        }
        let fits = try fixtures.write("w28.trace.zst", frame(windowLog: 28))
        #expect(try TraceFixtures.requests(fits, format: .lirs).map(\.key) == [1, 2])
        let huge = try fixtures.write("w30.trace.zst", frame(windowLog: 30))
        let error = #expect(throws: TraceError.self) { try TraceFixtures.requests(huge, format: .lirs) }
        #expect(error.map { "\($0)".contains("--long=28") } == true, "\(String(describing: error))")
    }

    /// An xz header naming a 3 GiB dictionary is refused within the decoder's memory limit, with
    /// a reason, not given the memory it asks for.
    @Test func anXzStreamAskingForTooMuchMemoryIsRefused() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try fixtures.write("huge.lis.xz", TraceFixtures.arcXzHugeDictionary)
        let error = #expect(throws: TraceError.self) { try TraceFixtures.requests(path) }
        #expect(error.map { "\($0)" }?.contains("more than 256 MiB") == true, "\(String(describing: error))")
    }

    @Test func missingFilesAndUnknownNamesAreErrors() throws {
        #expect(throws: TraceError.self) { try TraceFixtures.requests("/nonexistent/x.lis") }
        let error = #expect(throws: TraceError.self) { try TraceReader(path: "/tmp/trace.bin") }
        if case .unknownFormat = error?.reason {} else { Issue.record("expected .unknownFormat") }
    }

    @Test func formatsAreGuessedFromNames() {
        #expect(TraceFormat.guess(fromFileName: "arc/P12.lis.zst") == .arc)
        #expect(TraceFormat.guess(fromFileName: "lirs/cs.trace.gz") == .lirs)
        #expect(TraceFormat.guess(fromFileName: "cache2k/web07.trace.xz") == .cache2k)
        #expect(TraceFormat.guess(fromFileName: "x.oracleGeneral.bin.zst") == .oracleGeneral)
        #expect(TraceFormat.guess(fromFileName: "w44.oracleGeneral.zst") == .oracleGeneral)
        // Another binary layout, and a CSV export, are not read as oracleGeneral's records.
        #expect(TraceFormat.guess(fromFileName: "x.oracleGeneralOpNS.bin.zst") == nil)
        #expect(TraceFormat.guess(fromFileName: "x.oracleGeneral.csv") == .csv)
        #expect(TraceFormat.guess(fromFileName: "w.oracleGeneral.txt") == .plain)
        #expect(TraceFormat.guess(fromFileName: "x.csv.zst") == .csv)
        #expect(TraceFormat.guess(fromFileName: "mine.txt") == .plain)
        #expect(TraceFormat.guess(fromFileName: "unknown.dat") == nil)
    }

    @Test func loadingRenumbersKeysAndKeepsTheLargestSize() throws {
        let trace = try Trace(
            name: "t",
            requests: [TraceRequest(key: 9, size: 10), TraceRequest(key: 3, size: 5), TraceRequest(key: 9, size: 30)],
            hasSizes: true)
        #expect(trace.requests == [0, 1, 0])
        #expect(trace.objectSizes == [30, 5])
        // Each request at its object's size, as replays count hits: 30 + 5 + 30.
        #expect(trace.footprintBytes == 35 && trace.requestedBytes == 65)
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let limited = try Trace.load(TraceReader(path: fixtures.write("a.lis", text: "100 3 0 1\n5 1 0 2\n")), limit: 2)
        #expect(limited.requestCount == 2)
    }

    /// The same through the chunked loader, which skips the size check for a request no larger
    /// than the smallest size stored: a size below an object's own but above the smallest must
    /// still be compared, and one above its own must still raise it.
    @Test func loadingKeepsTheLargestSizeWhateverTheOrderOfSizes() throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        // a: 100, then 50 (at most the smallest so far), b: 10, a: 60 (above the smallest, below
        // a's own), a: 200 (raises), b: 10, c: 10.
        let csv = "key,size\n1,100\n1,50\n2,10\n1,60\n1,200\n2,10\n3,10\n"
        let trace = try Trace.load(TraceReader(path: fixtures.write("sizes.csv", text: csv)))
        #expect(trace.requests == [0, 0, 1, 0, 0, 1, 2])
        #expect(trace.objectSizes == [200, 10, 10])
        #expect(trace.requestedBytes == 4 * 200 + 10 + 10 + 10)
    }
}
