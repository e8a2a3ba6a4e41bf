import Foundation
import Testing

@testable import CacheSimulation

/// `Trace.load` parses on a thread of its own and numbers on the caller's, handing requests over in
/// chunks of 16,384 through a ring of 4. What it loads must be what a plain sequential read gives,
/// wherever a chunk, the ring, a limit or an error falls.
struct PipelinedParsingTests {
    /// An LIRS text trace of `count` requests over 1,000 keys in a fixed pseudo-random order, and
    /// optionally a malformed line after request `badAfter`.
    private func lirsTrace(_ fixtures: TraceFixtures, count: Int, badAfter: Int? = nil) throws -> String {
        var text = ""
        var state: UInt64 = 42
        for index in 0..<count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            text += "\(state >> 54)\n"
            if index + 1 == badAfter { text += "not-a-block\n" }
        }
        return try fixtures.write("t\(count)-\(badAfter ?? 0).trace", text: text)
    }

    /// The ids a sequential read gives: keys numbered in order of first appearance.
    private func sequentialIDs(_ path: String, limit: Int = .max) throws(TraceError) -> [UInt32] {
        var ids: [UInt64: UInt32] = [:]
        var result: [UInt32] = []
        try TraceReader(path: path).forEach(while: { request in
            let id = ids[request.key] ?? UInt32(ids.count)
            ids[request.key] = id
            result.append(id)
            return result.count < limit
        })
        return result
    }

    @Test(
        "Loads equal a sequential read, across chunk and ring boundaries and at every kind of limit",
        arguments: [1, 16_383, 16_384, 16_385, 65_536, 65_537, 200_000])
    func loadsMatchASequentialRead(count: Int) throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try lirsTrace(fixtures, count: count)
        let reader = try TraceReader(path: path)
        #expect(try Trace.load(reader).requests == sequentialIDs(path))
        for limit in [1, 16_384, 16_385, 100_000] where limit < count {
            let limited = try Trace.load(reader, limit: limit)
            #expect(limited.requests.count == limit)
            #expect(limited.requests == Array(try sequentialIDs(path).prefix(limit)))
        }
    }

    @Test(
        "A malformed line stops the load with the sequential reader's error, wherever it falls",
        arguments: [10, 16_384, 70_000])
    func malformedLinesFailAsInASequentialRead(badAfter: Int) throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try lirsTrace(fixtures, count: 100_000, badAfter: badAfter)
        var sequential: TraceError?
        do { _ = try sequentialIDs(path) } catch { sequential = error }
        let expected = try #require(sequential)
        #expect(expected.record == badAfter + 1, "the line after request \(badAfter)")
        #expect(throws: expected) { _ = try Trace.load(TraceReader(path: path)) }
    }

    @Test(
        "A limit reached before the error does not see the error, as in a sequential read, even in the error's chunk",
        arguments: [20_000, 20_500, 90_000])
    func aLimitBeforeTheErrorLoads(badAfter: Int) throws {
        let fixtures = try TraceFixtures()
        defer { fixtures.remove() }
        let path = try lirsTrace(fixtures, count: 100_000, badAfter: badAfter)
        #expect(try Trace.load(TraceReader(path: path), limit: 20_000).requests == sequentialIDs(path, limit: 20_000))
    }
}
