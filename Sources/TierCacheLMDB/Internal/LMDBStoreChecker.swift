import Foundation
import TierCacheCompression

/// Walks a store's `data.mdb` through a read-only mapping of its own (every access checked
/// against the file's size, so nothing can fault), never through LMDB, and checks every field LMDB
/// would follow: the meta pages, every branch and leaf page of every B-tree (page numbers in
/// range, each page used once, node offsets and sizes inside their page, keys in order, the tree
/// balanced, page and entry counts equal to the ones LMDB keeps), the header and extent of every
/// overflow value, and the free-page lists. A store that passes cannot make LMDB read outside its
/// file. Damage is reported, never trapped on: every read is bounds-checked.
///
/// Cost: a look at every branch and leaf page, the first page header of every overflow value and
/// every free-list record; with ``Scope/records``, also every overflow page and a decode of every
/// entry. About 60 ms of CPU for a store of 100,000 entries (118 MiB) with ``Scope/structure``.
/// Memory: one bit per page for the visited set.
struct LMDBStoreChecker {
    /// How much to read.
    enum Scope {
        /// Every B-tree page and the first page of every overflow value; not the values.
        case structure
        /// Also every entry record, decoded and verified like a lookup would.
        case records(ZstdCodec)
    }

    /// What the walk found.
    struct Report {
        /// The first structural damage, `nil` when the store is sound.
        var damage: String?
        /// Set when the file is a well-formed LMDB environment that TierCache did not write.
        var foreign: String?
        /// Set when the file could not be read to check it (it was not found damaged).
        var unreadable: String?
        var pageSize = 0
        var transactionID: UInt64 = 0
        /// Branch, leaf and overflow pages of every tree, including the free-page tree.
        var pagesWalked = 0
        /// Pages on the free lists.
        var freePages = 0
        /// Records in `tiercache.entries`.
        var entries = 0
        /// With ``Scope/records``: records that failed to decode or verify, and the first few keys.
        var damagedRecords = 0
        var damagedRecordKeys: [String] = []
        var bytesRead = 0
    }

    /// The names of TierCache's databases (see ``LMDBEnvironment``).
    static let databaseNames: Set<String> = ["tiercache.meta", "tiercache.entries", "tiercache.ticks", "tiercache.recency"]

    private struct Damage: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    private struct Foreign: Error {
        let message: String
    }

    /// The file could not be read at all (not damage: nothing was learnt about its contents).
    private struct Unreadable: Error {
        let message: String
    }

    let path: String

    init(dataFile path: String) {
        self.path = path
    }

    /// Checks the store. With `transactionID`, walks the snapshot whose meta page carries that
    /// transaction (a reader holding it open keeps its pages from being reused); otherwise the
    /// newer meta page, as LMDB picks it at open.
    func check(scope: Scope, transactionID: UInt64? = nil) -> Report {
        var report = Report()
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            report.damage = "cannot read \(path): \(String(cString: strerror(errno)))"
            return report
        }
        defer { close(fd) }
        var walk = Walk(fd: fd, scope: scope)
        defer { walk.unmapFile() }
        do {
            try walk.run(transactionID: transactionID)
        } catch let damage as Damage {
            report.damage = damage.message
        } catch let foreign as Foreign {
            report.foreign = foreign.message
        } catch let unreadable as Unreadable {
            report.unreadable = unreadable.message
        } catch {
            report.damage = "\(error)"
        }
        report.pageSize = walk.pageSize
        report.transactionID = walk.meta?.transactionID ?? 0
        report.pagesWalked = walk.pagesWalked
        report.freePages = walk.freePages
        report.entries = walk.entries
        report.damagedRecords = walk.damagedRecords
        report.damagedRecordKeys = walk.damagedRecordKeys
        report.bytesRead = walk.bytesRead
        return report
    }

    /// Checks a store that another process may be writing without holding a read transaction:
    /// a walk that finds damage is repeated when two or more commits landed during it (from the
    /// third commit on, a writer may reuse pages of the snapshot being walked).
    func checkWhileOthersMayWrite(scope: Scope) -> Report {
        var report = check(scope: scope)
        for _ in 0..<3 {
            guard report.damage != nil || report.damagedRecords > 0,
                  let now = newestTransactionID(), now >= report.transactionID &+ 2
            else { return report }
            report = check(scope: scope)
        }
        return report
    }

    /// The transaction of the newer meta page, or `nil` when the meta pages are damaged.
    func newestTransactionID() -> UInt64? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var walk = Walk(fd: fd, scope: .structure)
        return (try? walk.readMeta(transactionID: nil))?.transactionID
    }

    /// Reads only the two meta pages: what `mdb_env_open` reads. Returns the damage, if any.
    func checkHeader() -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "cannot read \(path): \(String(cString: strerror(errno)))" }
        defer { close(fd) }
        var walk = Walk(fd: fd, scope: .structure)
        do {
            _ = try walk.readMeta(transactionID: nil)
            return nil
        } catch let damage as Damage {
            return damage.message
        } catch {
            return nil
        }
    }

    /// One walk's state.
    private struct Walk {
        typealias F = LMDBFileFormat
        let fd: Int32
        let scope: Scope
        var fileSize = 0
        var pageSize = 0
        var meta: LMDBMetaPage?
        /// The file mapped read-only for the walk (`nil` before ``mapFile()``).
        var map: UnsafeRawBufferPointer?
        var visited: [UInt64] = []
        var pagesWalked = 0
        var freePages = 0
        var entries = 0
        var damagedRecords = 0
        var damagedRecordKeys: [String] = []
        var bytesRead = 0

        init(fd: Int32, scope: Scope) {
            self.fd = fd
            self.scope = scope
        }

        // MARK: Reading

        mutating func read(_ count: Int, at offset: Int) throws -> [UInt8] {
            guard count >= 0, offset >= 0, offset <= fileSize - count else {
                throw Damage("a read of \(count) bytes at offset \(offset) is past the end of data.mdb (\(fileSize) bytes)")
            }
            var bytes = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let got = bytes.withUnsafeMutableBytes { buffer in
                    pread(fd, buffer.baseAddress! + done, count - done, off_t(offset + done))
                }
                if got < 0, errno == EINTR { continue }
                guard got > 0 else { throw Damage("reading data.mdb at offset \(offset + done) failed") }
                done += got
            }
            bytesRead += count
            return bytes
        }

        /// Maps the file read-only: the walk then reads pages without a system call or a copy.
        /// Reads stay inside the size the file had when mapped, and LMDB never shrinks its data
        /// file, so no read can fault.
        mutating func mapFile() throws {
            guard let address = mmap(nil, fileSize, PROT_READ, MAP_SHARED, fd, 0), address != MAP_FAILED else {
                throw Unreadable(message: "cannot map data.mdb: \(String(cString: strerror(errno)))")
            }
            map = UnsafeRawBufferPointer(start: address, count: fileSize)
        }

        func unmapFile() {
            if let map, let address = map.baseAddress { munmap(UnsafeMutableRawPointer(mutating: address), map.count) }
        }

        /// `count` bytes at `offset` of the mapped file, valid until ``unmapFile()``.
        mutating func view(_ count: Int, at offset: Int) throws -> UnsafeRawBufferPointer {
            guard let map else { throw Unreadable(message: "data.mdb is not mapped") }
            guard count >= 0, offset >= 0, offset <= map.count - count else {
                throw Damage("a read of \(count) bytes at offset \(offset) is past the end of data.mdb (\(map.count) bytes)")
            }
            bytesRead += count
            return UnsafeRawBufferPointer(rebasing: map[offset..<(offset + count)])
        }

        mutating func page(_ number: UInt64) throws -> UnsafeRawBufferPointer {
            try view(pageSize, at: Int(number) * pageSize)
        }

        // MARK: Meta pages

        mutating func readMeta(transactionID: UInt64?) throws -> LMDBMetaPage {
            var stats = stat()
            guard fstat(fd, &stats) == 0 else { throw Damage("cannot stat data.mdb") }
            fileSize = Int(stats.st_size)
            guard fileSize >= 2 * F.pageSizes.lowerBound else {
                throw Damage("data.mdb is \(fileSize) bytes, too short for LMDB's two meta pages")
            }
            let first = try parseMeta(try read(F.Meta.end, at: 0), number: 0)
            pageSize = first.pageSize
            guard fileSize >= 2 * pageSize else { throw Damage("data.mdb is shorter than its two meta pages") }
            let second = try parseMeta(try read(F.Meta.end, at: pageSize), number: 1)
            guard second.pageSize == pageSize else {
                throw Damage("the meta pages disagree on the page size (\(pageSize), \(second.pageSize))")
            }
            let chosen: LMDBMetaPage
            if let transactionID {
                guard let match = [first, second].first(where: { $0.transactionID == transactionID }) else {
                    throw Damage("no meta page carries transaction \(transactionID)")
                }
                chosen = match
            } else {
                // mdb_env_pick_meta: the higher transaction, the first page on a tie.
                chosen = second.transactionID > first.transactionID ? second : first
            }
            guard chosen.lastPage >= F.metaPageCount - 1, chosen.lastPage < UInt64(fileSize / pageSize) else {
                throw Damage("the meta page's last page \(chosen.lastPage) is outside data.mdb (\(fileSize / pageSize) pages)")
            }
            guard chosen.mapSize >= (chosen.lastPage + 1) * UInt64(pageSize), chosen.mapSize <= 1 << 48 else {
                throw Damage("the meta page's map size \(chosen.mapSize) does not fit its \(chosen.lastPage + 1) pages")
            }
            meta = chosen
            return chosen
        }

        func parseMeta(_ bytes: [UInt8], number: UInt64) throws -> LMDBMetaPage {
            let flags = bytes.loadLittleEndian(UInt16.self, at: 10)
            guard flags & F.metaPage != 0 else { throw Damage("page \(number) is not a meta page (flags \(flags))") }
            let magic = bytes.loadLittleEndian(UInt32.self, at: F.Meta.magic)
            guard magic == F.magic else { throw Damage("meta page \(number) has no LMDB magic number") }
            let version = bytes.loadLittleEndian(UInt32.self, at: F.Meta.version)
            guard version == F.dataVersion else { throw Damage("meta page \(number) has data version \(version)") }
            guard let free = LMDBDatabaseRecord(bytes, at: F.Meta.freeDatabase),
                  let main = LMDBDatabaseRecord(bytes, at: F.Meta.mainDatabase)
            else { throw Damage("meta page \(number) is cut short") }
            let pageSize = Int(free.pageSizeOrPad)
            guard F.pageSizes.contains(pageSize), pageSize & (pageSize - 1) == 0 else {
                throw Damage("meta page \(number) has page size \(pageSize)")
            }
            return LMDBMetaPage(
                pageSize: pageSize,
                mapSize: bytes.loadLittleEndian(UInt64.self, at: F.Meta.mapSize),
                free: free, main: main,
                lastPage: bytes.loadLittleEndian(UInt64.self, at: F.Meta.lastPage),
                transactionID: bytes.loadLittleEndian(UInt64.self, at: F.Meta.transactionID))
        }

        // MARK: The walk

        mutating func run(transactionID: UInt64?) throws {
            let meta = try readMeta(transactionID: transactionID)
            try mapFile()
            visited = [UInt64](repeating: 0, count: Int(meta.lastPage + 1) / 64 + 1)
            // The free database keeps its own flags (integer keys); its page-size field is `mm_psize`.
            guard meta.free.flags == F.integerKey else {
                throw Damage("the free-page database has flags \(meta.free.flags)")
            }
            guard meta.main.flags == 0 else { throw Damage("the main database has flags \(meta.main.flags)") }
            var freeLists: [[UInt64]] = []
            try walkTree(meta.free, name: "free pages", integerKeys: true, minimumBranchKeys: 1) { walk, key, flags, value in
                freeLists.append(try walk.freeList(key: key, flags: flags, value: value))
            }
            // The main database names the tier's four databases. A store holding none of them is
            // someone else's (left alone); one holding some of them and anything else is ours, damaged
            // (a flipped bit in a name must not turn a damaged cache into a "foreign" one forever).
            var databases: [(String, LMDBDatabaseRecord)] = []
            var strangers: [String] = []
            try walkTree(meta.main, name: "main", integerKeys: false, minimumBranchKeys: 2) { _, key, flags, value in
                let name = String(decoding: key, as: UTF8.self)
                guard LMDBStoreChecker.databaseNames.contains(name) else {
                    strangers.append(flags & F.subData != 0 ? "a database named \(name.debugDescription)" : "a plain record \(name.debugDescription)")
                    return
                }
                guard flags == F.subData, case .inline(let bytes) = value, bytes.count == F.databaseRecordSize,
                      let record = LMDBDatabaseRecord([UInt8](bytes), at: 0)
                else { throw Damage("the record of database \(name.debugDescription) is malformed") }
                databases.append((name, record))
            }
            if databases.isEmpty, meta.main.entries > 0 {
                throw Foreign(message: "the store holds \(strangers.first ?? "no tiercache databases")")
            }
            if let stranger = strangers.first {
                throw Damage("the main database holds \(stranger) beside the tier's databases")
            }
            for (name, record) in databases {
                guard record.flags == 0 else { throw Damage("database \(name) has flags \(record.flags)") }
                let isEntries = name == "tiercache.entries"
                try walkTree(record, name: name, integerKeys: false, minimumBranchKeys: 2) { walk, key, flags, value in
                    guard flags & ~F.bigData == 0 else { throw Damage("a record in \(name) has node flags \(flags)") }
                    if isEntries { try walk.visitEntry(key: key, value: value) }
                }
            }
            // A page on a free list is reused by the next write: it must not also be in a tree.
            for list in freeLists {
                for number in list {
                    guard number >= F.metaPageCount, number <= meta.lastPage else {
                        throw Damage("free list names page \(number), outside 2...\(meta.lastPage)")
                    }
                    guard !isVisited(number) else { throw Damage("page \(number) is both in use and on a free list") }
                    markVisited(number)
                    freePages += 1
                }
            }
        }

        /// A leaf value: inline bytes, or the first page and size of an overflow value.
        enum Value {
            case inline(UnsafeRawBufferPointer)
            case overflow(page: UInt64, size: Int)
        }

        struct Counts {
            var branch: UInt64 = 0
            var leaf: UInt64 = 0
            var overflow: UInt64 = 0
            var entries: UInt64 = 0
        }

        mutating func walkTree(
            _ record: LMDBDatabaseRecord, name: String, integerKeys: Bool, minimumBranchKeys: Int,
            leaf: LeafVisitor? = nil
        ) throws {
            if record.root == F.invalidPage {
                guard record.depth == 0, record.entries == 0, record.branchPages == 0, record.leafPages == 0,
                      record.overflowPages == 0
                else { throw Damage("database \(name) has no root but counts pages or entries") }
                return
            }
            guard record.depth >= 1, Int(record.depth) <= F.maximumDepth else {
                throw Damage("database \(name) has depth \(record.depth)")
            }
            var counts = Counts()
            try walkPage(
                record.root, level: 1, depth: Int(record.depth), lower: nil, upper: nil, name: name,
                integerKeys: integerKeys, minimumBranchKeys: minimumBranchKeys, counts: &counts, leaf: leaf)
            guard counts.branch == record.branchPages, counts.leaf == record.leafPages,
                  counts.overflow == record.overflowPages, counts.entries == record.entries
            else {
                throw Damage(
                    "database \(name) counts \(record.branchPages) branch, \(record.leafPages) leaf, "
                        + "\(record.overflowPages) overflow pages and \(record.entries) entries; the walk found "
                        + "\(counts.branch), \(counts.leaf), \(counts.overflow) and \(counts.entries)")
            }
        }

        func isVisited(_ number: UInt64) -> Bool {
            visited[Int(number / 64)] & (1 << (number % 64)) != 0
        }

        mutating func markVisited(_ number: UInt64) {
            visited[Int(number / 64)] |= 1 << (number % 64)
        }

        mutating func claim(_ number: UInt64, in name: String) throws {
            guard let meta, number >= F.metaPageCount, number <= meta.lastPage else {
                throw Damage("database \(name) points to page \(number), outside 2...\(meta?.lastPage ?? 0)")
            }
            guard !isVisited(number) else { throw Damage("page \(number) is reached twice (database \(name))") }
            markVisited(number)
            pagesWalked += 1
        }

        /// Called with each leaf node's key, flags and value, for the databases whose values the
        /// walk must look into.
        typealias LeafVisitor = (inout Walk, UnsafeRawBufferPointer, UInt16, Value) throws -> Void

        /// Runs `body` on a page's bytes (a named step for the checks that read only the page).
        static func inspect<T>(_ page: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
            try body(page)
        }

        /// Whether key `a` sorts before key `b` in LMDB's order for the database: bytes compared
        /// as unsigned, a prefix first (`mdb_cmp_memn`), or native integers (`MDB_INTEGERKEY`).
        static func precedes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, integerKeys: Bool) -> Bool {
            if integerKeys, a.count == 8, b.count == 8 {
                return a.loadUnaligned(as: UInt64.self) < b.loadUnaligned(as: UInt64.self)
            }
            let common = min(a.count, b.count)
            if common > 0, let left = a.baseAddress, let right = b.baseAddress {
                let order = memcmp(left, right, common)
                if order != 0 { return order < 0 }
            }
            return a.count < b.count
        }

        mutating func walkPage(
            _ number: UInt64, level: Int, depth: Int, lower: [UInt8]?, upper: [UInt8]?, name: String,
            integerKeys: Bool, minimumBranchKeys: Int, counts: inout Counts, leaf: LeafVisitor?
        ) throws {
            try claim(number, in: name)
            let bytes = try page(number)
            let isLeaf = level == depth
            let pageSize = pageSize
            // Everything LMDB reads in this page, checked on the raw bytes; children and values
            // are followed afterwards.
            let nodes = try Self.inspect(bytes) { page throws -> [(offset: Int, keyStart: Int, keyEnd: Int)] in
                func u16(_ offset: Int) -> Int { Int(UInt16(littleEndian: page.loadUnaligned(fromByteOffset: offset, as: UInt16.self))) }
                let storedNumber = UInt64(littleEndian: page.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
                guard storedNumber == number else { throw Damage("page \(number) says it is page \(storedNumber)") }
                let flags = UInt16(u16(10))
                guard flags == (isLeaf ? F.leafPage : F.branchPage) else {
                    throw Damage("page \(number) of \(name) at level \(level) of \(depth) has flags \(flags)")
                }
                let lowerBound = u16(12), upperBound = u16(14)
                guard lowerBound >= F.pageHeaderSize, lowerBound <= upperBound, upperBound <= pageSize,
                      (lowerBound - F.pageHeaderSize) % 2 == 0
                else { throw Damage("page \(number) has free space bounds \(lowerBound)...\(upperBound)") }
                let count = (lowerBound - F.pageHeaderSize) / 2
                guard count >= (isLeaf ? 1 : minimumBranchKeys) else {
                    throw Damage("\(isLeaf ? "leaf" : "branch") page \(number) of \(name) holds \(count) nodes")
                }
                // Every node's header and key inside the page, and the nodes tiling the space
                // from the upper bound to the page's end without gaps or overlaps, as LMDB keeps
                // them: a size that overlaps the next node would make LMDB move bytes past the
                // page when it deletes the node (heap corruption, not a crash where the damage is).
                var nodes: [(offset: Int, keyStart: Int, keyEnd: Int)] = []
                var extents: [(start: Int, end: Int)] = []
                nodes.reserveCapacity(count)
                extents.reserveCapacity(count)
                for index in 0..<count {
                    let offset = u16(F.pageHeaderSize + 2 * index)
                    guard offset >= upperBound, offset % 2 == 0, offset + F.nodeHeaderSize <= pageSize else {
                        throw Damage("node \(index) of page \(number) is at offset \(offset)")
                    }
                    let keyStart = offset + F.nodeHeaderSize
                    let keyEnd = keyStart + u16(offset + 6)
                    var end = keyEnd
                    if isLeaf {
                        let nodeFlags = UInt16(u16(offset + 4))
                        guard nodeFlags & F.dupData == 0 else { throw Damage("node \(index) of page \(number) of \(name) is a duplicate set") }
                        end += nodeFlags & F.bigData != 0 ? 8 : u16(offset) | u16(offset + 2) << 16
                    }
                    end = (end + 1) & ~1
                    guard end <= pageSize else { throw Damage("node \(index) of page \(number) of \(name) runs past the page") }
                    nodes.append((offset, keyStart, keyEnd))
                    extents.append((offset, end))
                }
                extents.sort { $0.start < $1.start }
                var expected = upperBound
                for extent in extents {
                    guard extent.start == expected else {
                        throw Damage("the nodes of page \(number) of \(name) overlap or leave gaps at offset \(expected)")
                    }
                    expected = extent.end
                }
                guard expected == pageSize else { throw Damage("the nodes of page \(number) of \(name) end at \(expected), not the page's end") }

                // Keys strictly ascending, inside the range the parent gave this page. A branch's
                // first key is not used (it stands for everything below the second).
                func key(_ index: Int) -> UnsafeRawBufferPointer {
                    UnsafeRawBufferPointer(rebasing: page[nodes[index].keyStart..<nodes[index].keyEnd])
                }
                let firstKeyed = isLeaf ? 0 : 1
                for index in firstKeyed..<count {
                    let current = key(index)
                    if integerKeys, current.count != 8 { throw Damage("a key of \(name) is \(current.count) bytes") }
                    if index > firstKeyed, !Self.precedes(key(index - 1), current, integerKeys: integerKeys) {
                        throw Damage("keys out of order in page \(number) of \(name)")
                    }
                    if let lower, lower.withUnsafeBytes({ Self.precedes(current, $0, integerKeys: integerKeys) }) {
                        throw Damage("a key in page \(number) of \(name) is below its parent's range")
                    }
                    if let upper, !upper.withUnsafeBytes({ Self.precedes(current, $0, integerKeys: integerKeys) }) {
                        throw Damage("a key in page \(number) of \(name) is above its parent's range")
                    }
                }
                return nodes
            }

            func u16(_ offset: Int) -> Int { Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))) }
            func slice(_ start: Int, _ end: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[start..<end]) }
            if !isLeaf {
                counts.branch += 1
                for index in nodes.indices {
                    let offset = nodes[index].offset
                    let child = UInt64(u16(offset)) | UInt64(u16(offset + 2)) << 16 | UInt64(u16(offset + 4)) << 32
                    try walkPage(
                        child, level: level + 1, depth: depth,
                        lower: index == 0 ? lower : Array(slice(nodes[index].keyStart, nodes[index].keyEnd)),
                        upper: index + 1 < nodes.count ? Array(slice(nodes[index + 1].keyStart, nodes[index + 1].keyEnd)) : upper,
                        name: name, integerKeys: integerKeys, minimumBranchKeys: minimumBranchKeys, counts: &counts, leaf: leaf)
                }
                return
            }
            counts.leaf += 1
            counts.entries += UInt64(nodes.count)
            for node in nodes {
                let size = u16(node.offset) | u16(node.offset + 2) << 16
                let nodeFlags = UInt16(u16(node.offset + 4))
                if nodeFlags & F.bigData != 0 {
                    let first = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: node.keyEnd, as: UInt64.self))
                    counts.overflow += UInt64(try claimOverflow(first, size: size, in: name))
                    try leaf?(&self, slice(node.keyStart, node.keyEnd), nodeFlags, .overflow(page: first, size: size))
                } else {
                    try leaf?(&self, slice(node.keyStart, node.keyEnd), nodeFlags, .inline(slice(node.keyEnd, node.keyEnd + size)))
                }
            }
        }

        /// Checks an overflow value's first page and marks its run of pages; returns the run's length.
        mutating func claimOverflow(_ first: UInt64, size: Int, in name: String) throws -> Int {
            guard let meta, first >= F.metaPageCount, first <= meta.lastPage else {
                throw Damage("a value in \(name) starts at page \(first), outside the file")
            }
            let header = try view(F.pageHeaderSize, at: Int(first) * pageSize)
            let storedNumber = UInt64(littleEndian: header.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
            let flags = UInt16(littleEndian: header.loadUnaligned(fromByteOffset: 10, as: UInt16.self))
            let pages = Int(UInt32(littleEndian: header.loadUnaligned(fromByteOffset: 12, as: UInt32.self)))
            guard storedNumber == first, flags == F.overflowPage else {
                throw Damage("page \(first) (a value in \(name)) is not an overflow page")
            }
            let needed = F.overflowPages(forValueSize: size, pageSize: pageSize)
            guard pages >= needed, first + UInt64(pages) - 1 <= meta.lastPage else {
                throw Damage("the overflow value at page \(first) in \(name) (\(size) bytes) spans \(pages) pages")
            }
            for number in first..<(first + UInt64(pages)) {
                guard !isVisited(number) else { throw Damage("page \(number) is reached twice (a value in \(name))") }
                markVisited(number)
            }
            pagesWalked += pages
            return pages
        }

        /// The bytes of a value (reads overflow pages).
        mutating func valueBytes(_ value: Value) throws -> [UInt8] {
            switch value {
            case .inline(let bytes): return [UInt8](bytes)
            case .overflow(let page, let size): return [UInt8](try view(size, at: Int(page) * pageSize + F.pageHeaderSize))
            }
        }

        /// A free-list record: a count, then that many page numbers.
        mutating func freeList(key: UnsafeRawBufferPointer, flags: UInt16, value: Value) throws -> [UInt64] {
            guard flags & ~F.bigData == 0 else { throw Damage("a free-list record has node flags \(flags)") }
            let bytes = try valueBytes(value)
            guard bytes.count >= 8, bytes.count % 8 == 0 else { throw Damage("a free-list record is \(bytes.count) bytes") }
            let count = bytes.loadLittleEndian(UInt64.self, at: 0)
            guard count == UInt64(bytes.count / 8 - 1) else {
                throw Damage("a free-list record counts \(count) pages in \(bytes.count) bytes")
            }
            return (0..<Int(count)).map { bytes.loadLittleEndian(UInt64.self, at: 8 * ($0 + 1)) }
        }

        mutating func visitEntry(key: UnsafeRawBufferPointer, value: Value) throws {
            entries += 1
            guard case .records(let codec) = scope else { return }
            let bytes = try valueBytes(value)
            let sound = bytes.withUnsafeBytes { record in
                guard let header = try? StoredRecord.header(of: record) else { return false }
                return (try? StoredRecord.value(of: header, codec: codec)) != nil
            }
            if !sound {
                damagedRecords += 1
                if damagedRecordKeys.count < 10 { damagedRecordKeys.append(String(decoding: key, as: UTF8.self)) }
            }
        }
    }
}
