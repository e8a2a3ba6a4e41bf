/// A trace loaded into memory in compact form, ready to be replayed many times.
///
/// Keys are renumbered densely (`0..<objectCount`) in order of first appearance, so a policy can keep
/// its per-object state in arrays instead of hash tables: that is what makes replays run at tens of
/// millions of requests per second. Each object has one size, the largest it was requested with
/// (libCacheSim's `oracleGeneral` traces never vary; its CSV sometimes does).
public struct Trace: Sendable {
    /// A label for reports, usually the file name.
    public var name: String
    /// The dense object id of every request, in order.
    public let requests: [UInt32]
    /// The size in bytes of every object, indexed by id.
    public let objectSizes: [UInt32]
    /// Whether the sizes came from the trace (false: every object counts as 1 byte).
    public let hasSizes: Bool

    /// The number of requests.
    public var requestCount: Int { requests.count }
    /// The most requests a trace holds, 2^31 - 1: the exact LRU curve and Belady's MIN number
    /// requests in 32 bits. Loading a longer trace fails at the first request past it (load it
    /// with a limit), before its whole file is read.
    public static let maximumRequestCount = Int(Int32.max)
    /// The number of distinct objects (the footprint in objects).
    public var objectCount: Int { objectSizes.count }
    /// The sum of all objects' sizes: the capacity at which nothing is ever evicted (byte mode).
    public let footprintBytes: UInt64
    /// The bytes of all requests together, each at its object's size (the largest it was
    /// requested with, as replays count it: a byte hit ratio never passes 1).
    public let requestedBytes: UInt64

    /// How the trace was loaded, when it came from ``load(_:limit:cache:)``.
    public struct Loading: Sendable, Codable, Hashable {
        /// Where the trace's requests came from.
        public enum Source: String, Sendable, Codable, Hashable {
            /// Decompressed and parsed from the trace file.
            case parsed
            /// Read back from a ``TraceCache`` copy.
            case binaryCopy = "binary copy"
        }

        /// Parsed afresh, or read from a binary copy.
        public var source: Source
        /// Wall-clock seconds the load took (reading, parsing and numbering the keys).
        public var seconds: Double
        /// Why a binary copy could not be written after parsing, if one was asked for and failed.
        public var storeFailure: String?
    }

    /// How this trace was loaded (nil for traces built in memory).
    public internal(set) var loading: Loading?
    /// The bytes ``addingEntryOverhead(_:)`` added to every object's size (0 for a trace's own
    /// sizes): reports say so, since their footprint and capacities then count them.
    public internal(set) var entryOverhead: UInt32 = 0

    /// Loads a trace file.
    /// - Parameters:
    ///   - reader: the file to read, and its format.
    ///   - limit: stop after this many requests (nil: read all).
    ///   - cache: where binary copies of parsed traces live: a copy that still describes the file
    ///     is read instead of parsing, and a parsed trace leaves one for the next run.
    public static func load(
        _ reader: TraceReader, limit: Int? = nil, cache: TraceCache? = nil
    ) throws(TraceError) -> Trace {
        let start = ContinuousClock.now
        // Taken before reading: a copy stamped after parsing a file still being written would
        // describe more than it holds.
        let source = cache.map { _ in FileStatus(path: reader.path) } ?? nil
        if let cache, var copy = cache.load(reader, limit: limit) {
            copy.loading = Loading(source: .binaryCopy, seconds: (ContinuousClock.now - start).inSeconds)
            return copy
        }
        let hasSizes = try reader.requestsCarrySizes()
        var builder = Builder(maximumRequests: Trace.maximumRequestCount)
        let limit = limit ?? Int.max
        if limit > 0 {
            try reader.forEachChunkParsedAhead(while: { chunk throws(TraceError) in
                try builder.append(
                    contentsOf: UnsafeBufferPointer(rebasing: chunk.prefix(limit - builder.requests.count)),
                    file: reader.path)
                return builder.requests.count < limit
            })
        }
        let name = String(reader.path.split(separator: "/").last ?? Substring(reader.path))
        var trace = builder.build(name: name, hasSizes: hasSizes)
        var storeFailure: String?
        if let cache {
            do { try cache.store(trace, for: reader, limit: limit == Int.max ? nil : limit, source: source) } catch {
                storeFailure = error.description
            }
        }
        trace.loading = Loading(
            source: .parsed, seconds: (ContinuousClock.now - start).inSeconds, storeFailure: storeFailure)
        return trace
    }

    /// Builds a trace from requests in memory (tests, synthetic workloads).
    public init(name: String, requests: some Sequence<TraceRequest>, hasSizes: Bool = false) throws(TraceError) {
        var builder = Builder(maximumRequests: Trace.maximumRequestCount)
        for request in requests { try builder.append(request, file: name) }
        self = builder.build(name: name, hasSizes: hasSizes)
    }

    /// This trace with `bytes` added to every object's size (saturating at `UInt32.max`): sizes in
    /// the units of a cache that charges each entry more than its value. `MemoryTier` charges an
    /// entry its key's UTF-8 length and `MemoryTier.perEntryOverhead` (64) bytes beyond the value,
    /// so a trace of values, replayed with that overhead added, is sized as the tier counts. A
    /// trace without sizes is returned as it is (it has no bytes to add to, and stays refused in
    /// byte mode).
    public func addingEntryOverhead(_ bytes: UInt32) -> Trace {
        guard bytes > 0, hasSizes else { return self }
        var trace = Trace(
            name: name, requests: requests,
            objectSizes: objectSizes.map { $0.addingReportingOverflow(bytes).overflow ? .max : $0 + bytes },
            hasSizes: true)
        trace.loading = loading
        trace.entryOverhead = entryOverhead.addingReportingOverflow(bytes).overflow ? .max : entryOverhead + bytes
        return trace
    }

    /// A trace from already-dense parts (a sample of another trace, see ``MiniatureSimulation``,
    /// or a binary copy, which knows its `requestedBytes`): every id in `requests` is an index of
    /// `objectSizes`.
    init(name: String, requests: [UInt32], objectSizes: [UInt32], hasSizes: Bool, requestedBytes: UInt64? = nil) {
        self.name = name
        self.requests = requests
        self.objectSizes = objectSizes
        self.hasSizes = hasSizes
        self.footprintBytes = objectSizes.reduce(0) { $0 + UInt64($1) }
        // Each request at its object's size, which is what a replay's hits count: summing each
        // request's own size instead gave byte hit ratios over 1 where an object's size varies.
        self.requestedBytes =
            !hasSizes
            ? UInt64(requests.count)
            : requestedBytes
                ?? objectSizes.withUnsafeBufferPointer { sizes in
                    requests.reduce(0) { $0 &+ UInt64(sizes[Int($1)]) }
                }
    }

    /// Numbers a trace's requests as they are read.
    struct Builder {
        /// The most requests it takes (``Trace/maximumRequestCount``; less in tests).
        let maximumRequests: Int
        var ids = DenseIDTable()
        var requests: [UInt32] = []
        var sizes: [UInt32] = []
        /// The smallest of `sizes`: no request at or below it can raise an object's size.
        var smallestSize = UInt32.max

        @inline(__always)
        mutating func append(_ request: TraceRequest, file: String) throws(TraceError) {
            // Ids run to UInt32.max - 1: the id table keeps UInt32.max to mark an empty slot.
            guard ids.count < Int(UInt32.max) - 1 else {
                throw TraceError(
                    file: file, record: requests.count + 1,
                    reason: .malformed("more than \(UInt32.max - 1) distinct objects"))
            }
            guard requests.count < maximumRequests else {
                throw TraceError(
                    file: file, record: requests.count + 1,
                    reason: .malformed(
                        "more than \(maximumRequests) requests, the most a trace holds: load it with a limit"))
            }
            let (id, isNew) = ids.id(for: request.key)
            if isNew {
                sizes.append(request.size)
                smallestSize = min(smallestSize, request.size)
            } else if request.size > sizes[Int(id)] {
                sizes[Int(id)] = request.size
            }
            requests.append(id)
        }

        /// ``append(_:file:)`` for a chunk of requests, numbered at once (``DenseIDTable/number(_:into:sizes:smallestSize:)``).
        mutating func append(contentsOf chunk: UnsafeBufferPointer<TraceRequest>, file: String) throws(TraceError) {
            guard ids.count + chunk.count < Int(UInt32.max) - 1,
                requests.count + chunk.count <= maximumRequests
            else {
                // Near a limit: one at a time, so the error names the exact record.
                for request in chunk { try append(request, file: file) }
                return
            }
            let start = requests.count
            LargeArrays.reserve(&requests, minimumCapacity: start + chunk.count)
            requests.append(contentsOf: repeatElement(0, count: chunk.count))
            requests.withUnsafeMutableBufferPointer { requests in
                ids.number(
                    chunk, into: UnsafeMutableBufferPointer(rebasing: requests[start...]), sizes: &sizes,
                    smallestSize: &smallestSize)
            }
        }

        func build(name: String, hasSizes: Bool) -> Trace {
            Trace(
                name: name, requests: requests,
                objectSizes: hasSizes ? sizes : [UInt32](repeating: 1, count: sizes.count), hasSizes: hasSizes)
        }
    }
}
