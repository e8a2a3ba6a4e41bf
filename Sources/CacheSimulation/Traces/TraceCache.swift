#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A compact binary copy of parsed traces, so that later runs skip decompression and parsing.
///
/// A parsed trace is two arrays of 32-bit integers (the dense id of every request, the size of
/// every object); the copy is those arrays behind a header, one file per (trace file, format,
/// request limit) in ``directory``. Reading it back is one `read(2)` per array: P12's 13.2M
/// requests load from it in tens of milliseconds instead of seconds.
///
/// A copy is used only while it still describes its source: the header records the source's
/// file (its inode), size, modification time and status change time, and a copy whose
/// source changed is ignored (and replaced by the next store), as is one made by a build that
/// parsed the format differently. A copy that is truncated, damaged (its checksum covers its
/// header and both arrays) or holds an id out of range is ignored too: the trace is parsed again,
/// never read wrong. Stores are best effort and atomic (a temporary file renamed into place), so a
/// crash leaves no half-written copy.
///
/// The copies take at most ``maximumBytes`` together: each store removes the least recently used
/// others beyond it (a load marks its copy used), so traces deleted or renamed, and request limits
/// tried once, do not pile up in the user's cache directory.
public struct TraceCache: Sendable {
    /// Where the copies live.
    public let directory: String
    /// The most the copies in ``directory`` take together, in bytes; the copy just stored is kept
    /// even if it alone takes more.
    public let maximumBytes: Int

    /// The default bound on the copies: about 60 copies of P12 (13.2 million requests).
    public static let defaultMaximumBytes = 4 << 30

    /// A cache of binary copies in `directory` (created when the first copy is written), holding
    /// at most `maximumBytes` of them.
    public init(directory: String, maximumBytes: Int = TraceCache.defaultMaximumBytes) {
        self.directory = directory
        self.maximumBytes = max(0, maximumBytes)
    }

    /// `$TIERCACHE_TRACE_CACHE`, else `$XDG_CACHE_HOME/tiercache/traces`, else
    /// `$HOME/.cache/tiercache/traces`; nil when none of them is set.
    public static var defaultDirectory: String? {
        func environment(_ name: String) -> String? {
            guard let value = getenv(name) else { return nil }
            let string = String(cString: value)
            return string.isEmpty ? nil : string
        }
        if let explicit = environment("TIERCACHE_TRACE_CACHE") { return explicit }
        if let xdg = environment("XDG_CACHE_HOME") { return xdg + "/tiercache/traces" }
        if let home = environment("HOME") { return home + "/.cache/tiercache/traces" }
        return nil
    }

    /// Why a copy could not be stored.
    public struct StoreError: Error, Sendable, CustomStringConvertible {
        /// The copy that could not be written.
        public let path: String
        /// Why, in words.
        public let reason: String
        /// The path and the reason.
        public var description: String { "cannot write the binary copy \(path): \(reason)" }
    }

    /// "TCTRACE" and the layout's version, little-endian. Version 2: copies of CSV and plain
    /// traces made by version 1 said every such trace had sizes, even one without a size column.
    /// Version 3: the requested bytes count each request at its object's size, not its own.
    /// Version 4: the header records the source's status change time and inode and the readers'
    /// parsing revision, and the checksum covers the header too (a flipped bit in the requested
    /// bytes went unnoticed).
    static let magic: UInt64 = 0x0445_4341_5254_4354
    /// The magic, the identity, the source's size and modification time, the request and object
    /// counts, whether the trace has sizes, the requested bytes, the checksum, the source's status
    /// change time, the readers' parsing revision (``TraceReader``'s; in the header, not the
    /// file's name, so that a copy made by an earlier revision is replaced, not left beside the
    /// new one) and the source's inode.
    static let headerWords = 12
    /// The header word that holds the checksum (of every other word, and of both arrays).
    private static let checksumWord = 8

    /// The copy's file for a source: its name hashes the source's real path, format and limit.
    func path(for reader: TraceReader, limit: Int?) -> (path: String, identity: UInt64) {
        let source = Self.realPath(reader.path)
        let identity = Self.fnv1a("\(source)\u{0}\(reader.format.rawValue)\u{0}\(limit.map(String.init) ?? "all")")
        let hex = String(identity, radix: 16)
        return (directory + "/" + String(repeating: "0", count: 16 - hex.count) + hex + Self.copySuffix, identity)
    }

    /// The copy of `reader`'s trace, or nil when there is none that still describes the source.
    public func load(_ reader: TraceReader, limit: Int?) -> Trace? {
        guard let source = FileStatus(path: reader.path), source.isRegularFile else { return nil }
        let (path, identity) = path(for: reader, limit: limit)
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var header = [UInt64](repeating: 0, count: Self.headerWords)
        guard Self.readFully(descriptor, into: &header) else { return nil }
        let words = header.map { UInt64(littleEndian: $0) }
        guard words[0] == Self.magic, words[1] == identity, words[2] == source.size, words[3] == source.modified,
            words[9] == source.statusChanged, words[10] == UInt64(TraceReader.parsingRevision),
            words[11] == source.inode,
            words[4] <= UInt64(Trace.maximumRequestCount), words[5] <= UInt64(UInt32.max), words[6] <= 1
        else { return nil }
        let requestCount = Int(words[4])
        let objectCount = Int(words[5])
        var status = stat()
        let expectedSize = Self.headerWords * 8 + 4 * (requestCount + objectCount)
        guard fstat(descriptor, &status) == 0, Int(status.st_size) == expectedSize else { return nil }
        var requests = [UInt32](repeating: 0, count: requestCount)
        var sizes = [UInt32](repeating: 0, count: objectCount)
        guard Self.readFully(descriptor, into: &requests), Self.readFully(descriptor, into: &sizes) else { return nil }
        guard Self.checksum(header: header, requests, sizes) == words[Self.checksumWord] else { return nil }
        #if _endian(big)
        requests = requests.map { UInt32(littleEndian: $0) }
        sizes = sizes.map { UInt32(littleEndian: $0) }
        #endif
        // The checksum already vouches for the ids; this makes an out-of-range id impossible to
        // reach a policy's arrays even if a copy were forged.
        let limit = UInt32(truncatingIfNeeded: objectCount)
        guard !requests.contains(where: { $0 >= limit }) else { return nil }
        Self.markUsed(descriptor)
        let name = String(reader.path.split(separator: "/").last ?? Substring(reader.path))
        return Trace(
            name: name, requests: requests, objectSizes: sizes, hasSizes: words[6] == 1, requestedBytes: words[7])
    }

    /// Writes `trace` as the copy of `reader`'s trace (creating ``directory`` when missing).
    ///
    /// The copy records the source's status now (its size, times and inode): store a trace read
    /// from a file that is no longer being written.
    public func store(_ trace: Trace, for reader: TraceReader, limit: Int?) throws(StoreError) {
        try store(trace, for: reader, limit: limit, source: FileStatus(path: reader.path))
    }

    /// ``store(_:for:limit:)`` with the source's status taken before the trace was read, so that a
    /// file written on while it was parsed is not stamped with the state of more than was read.
    func store(_ trace: Trace, for reader: TraceReader, limit: Int?, source: FileStatus?) throws(StoreError) {
        let (path, identity) = path(for: reader, limit: limit)
        guard let source, source.isRegularFile else {
            throw StoreError(path: path, reason: "the source cannot be read, or is not a regular file")
        }
        guard FileStatus(path: reader.path) == source else {
            throw StoreError(path: path, reason: "the source changed while it was read")
        }
        try Self.makeDirectories(directory, for: path)
        Self.removeAbandonedTemporaries(of: path)
        let temporary = Self.temporaryPrefix(of: path) + "\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw StoreError(path: path, reason: String(cString: strerror(errno))) }
        #if _endian(big)
        let requests = trace.requests.map { $0.littleEndian }
        let sizes = trace.objectSizes.map { $0.littleEndian }
        #else
        let requests = trace.requests
        let sizes = trace.objectSizes
        #endif
        var header: [UInt64] = [
            Self.magic, identity, source.size, source.modified, UInt64(trace.requestCount), UInt64(trace.objectCount),
            trace.hasSizes ? 1 : 0, trace.requestedBytes, 0, source.statusChanged, UInt64(TraceReader.parsingRevision),
            source.inode,
        ].map { $0.littleEndian }
        header[Self.checksumWord] = Self.checksum(header: header, requests, sizes).littleEndian
        let written =
            Self.writeFully(descriptor, header) && Self.writeFully(descriptor, requests)
            && Self.writeFully(descriptor, sizes)
        let reason = written ? nil : String(cString: strerror(errno))
        close(descriptor)
        guard written, rename(temporary, path) == 0 else {
            let detail = reason ?? String(cString: strerror(errno))
            unlink(temporary)
            throw StoreError(path: path, reason: detail)
        }
        prune(keeping: path)
    }

    // MARK: - Bound

    /// The copies' names end so (``path(for:limit:)``).
    private static let copySuffix = ".tctrace"

    /// Records a use of the open copy: its modification time, which nothing else reads (a copy's
    /// validity is its header's), orders the copies for ``prune(keeping:)``.
    private static func markUsed(_ descriptor: Int32) {
        var now = timespec()
        guard clock_gettime(CLOCK_REALTIME, &now) == 0 else { return }
        var times = [now, now]
        _ = futimens(descriptor, &times)
    }

    /// Removes the least recently used copies in ``directory`` until they take at most
    /// ``maximumBytes``, never `kept`. Best effort: a copy another process is reading stays
    /// readable to it (its descriptor is open), and one it opens next is parsed again.
    func prune(keeping kept: String) {
        let copies = Self.names(in: directory).compactMap { name -> (path: String, bytes: Int, used: UInt64)? in
            let path = directory + "/" + name
            guard name.hasSuffix(Self.copySuffix), let status = FileStatus(path: path), status.isRegularFile else {
                return nil
            }
            return (path, Int(clamping: status.size), status.modified)
        }
        var total = copies.reduce(0) { $0 &+ $1.bytes }
        guard total > maximumBytes else { return }
        for copy in copies.sorted(by: { $0.used < $1.used }) where total > maximumBytes && copy.path != kept {
            if unlink(copy.path) == 0 { total -= copy.bytes }
        }
    }

    // MARK: - Files

    /// Where a process writes `path` before renaming it into place: this, then its process id.
    static func temporaryPrefix(of path: String) -> String { path + ".tmp." }

    /// Removes the temporaries of `path` whose writers are no longer running (killed while
    /// writing: a copy is as large as the trace's requests, and nothing else would remove it).
    /// One whose process id names a running process, another writer's or a reuse of the id, is
    /// left. (In a directory shared between machines another machine's writer looks ended: its
    /// rename then fails, and that copy is not written; nothing wrong is read.)
    static func removeAbandonedTemporaries(of path: String) {
        let prefix = temporaryPrefix(of: path)
        let slash = prefix.lastIndex(of: "/")
        let directory = slash.map { String(prefix[..<$0]) } ?? "."
        let namePrefix = slash.map { String(prefix[prefix.index(after: $0)...]) } ?? prefix
        for name in names(in: directory.isEmpty ? "/" : directory) {
            guard name.hasPrefix(namePrefix), let writer = pid_t(name.dropFirst(namePrefix.count)), writer > 0,
                writer != getpid(), kill(writer, 0) != 0, errno == ESRCH
            else { continue }
            unlink(directory + "/" + name)
        }
    }

    /// The names of the entries of `directory` (none when it cannot be read).
    private static func names(in directory: String) -> [String] {
        guard let stream = opendir(directory) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            names.append(
                withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) })
        }
        return names
    }

    private static func realPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func makeDirectories(_ directory: String, for path: String) throws(StoreError) {
        var prefix = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0, errno != EEXIST {
                throw StoreError(path: path, reason: "cannot create \(prefix): \(String(cString: strerror(errno)))")
            }
        }
    }

    private static func readFully<T>(_ descriptor: Int32, into array: inout [T]) -> Bool {
        array.withUnsafeMutableBytes { buffer in
            transferFully(UnsafeRawBufferPointer(buffer)) {
                read(descriptor, UnsafeMutableRawPointer(mutating: $0), $1)
            }
        }
    }

    private static func writeFully<T>(_ descriptor: Int32, _ array: [T]) -> Bool {
        array.withUnsafeBytes { buffer in transferFully(buffer) { write(descriptor, $0, $1) } }
    }

    /// Calls `transfer` (a `read` or `write`) until all of `buffer` has gone through, retrying
    /// interrupted calls; false on an error or an early end of file.
    private static func transferFully(
        _ buffer: UnsafeRawBufferPointer, _ transfer: (UnsafeRawPointer, Int) -> Int
    ) -> Bool {
        guard let base = buffer.baseAddress else { return true }  // nothing to move
        var offset = 0
        while offset < buffer.count {
            let count = transfer(base + offset, buffer.count - offset)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return false }
            offset += count
        }
        return true
    }

    // MARK: - Hashes

    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        return hash
    }

    /// A 64-bit checksum of the header as stored (but its checksum word) and of both arrays as
    /// stored, eight bytes at a time (a multiply-rotate mix: every bit of every word reaches the
    /// result, fast enough to be unnoticed beside the read).
    static func checksum(header: [UInt64], _ requests: [UInt32], _ sizes: [UInt32]) -> UInt64 {
        var hash: UInt64 = 0x9E37_79B9_7F4A_7C15
        for (index, word) in header.enumerated() where index != checksumWord {
            hash = (hash ^ word) &* 0x94D0_49BB_1331_11EB
            hash ^= hash >> 29
        }
        for array in [requests, sizes] {
            hash = (hash ^ UInt64(array.count)) &* 0xBF58_476D_1CE4_E5B9
            array.withUnsafeBytes { bytes in
                let words = bytes.count / 8
                for index in 0..<words {
                    let word = bytes.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)
                    hash = ((hash ^ word) &* 0x94D0_49BB_1331_11EB)
                    hash ^= hash >> 29
                }
                if bytes.count % 8 != 0 {
                    let tail = bytes.loadUnaligned(fromByteOffset: words * 8, as: UInt32.self)
                    hash = (hash ^ UInt64(tail)) &* 0x94D0_49BB_1331_11EB
                }
            }
        }
        return hash ^ (hash >> 31)
    }
}
