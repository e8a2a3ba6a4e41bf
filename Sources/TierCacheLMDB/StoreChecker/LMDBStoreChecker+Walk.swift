import Foundation

extension LMDBStoreChecker {
    /// One walk's state.
    struct Walk {
        typealias F = LMDBFileFormat
        // For the walk's extensions in other files, which do not see the checker's members.
        typealias Damage = LMDBStoreChecker.Damage
        typealias Foreign = LMDBStoreChecker.Foreign
        typealias Unreadable = LMDBStoreChecker.Unreadable
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
        var unknownFormatRecords = 0
        var bytesRead = 0

        init(fd: Int32, scope: Scope) {
            self.fd = fd
            self.scope = scope
        }

        // MARK: Reading

        mutating func read(_ count: Int, at offset: Int) throws -> [UInt8] {
            guard count >= 0, offset >= 0, offset <= fileSize - count else {
                throw Damage(
                    "a read of \(count) bytes at offset \(offset) is past the end of data.mdb (\(fileSize) bytes)")
            }
            var bytes = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let got = bytes.withUnsafeMutableBytes { buffer in
                    pread(fd, buffer.baseAddress! + done, count - done, off_t(offset + done))
                }
                if got < 0, errno == EINTR { continue }
                // A failed read says nothing of the contents (an I/O error may pass); a file that
                // ends before its stated size is damage.
                guard got >= 0 else {
                    throw Unreadable(
                        message:
                            "reading data.mdb at offset \(offset + done) failed: \(String(cString: strerror(errno)))")
                }
                guard got > 0 else { throw Damage("data.mdb ends at offset \(offset + done), inside a read") }
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
                throw Damage(
                    "a read of \(count) bytes at offset \(offset) is past the end of data.mdb (\(map.count) bytes)")
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
            guard fstat(fd, &stats) == 0 else {
                throw Unreadable(message: "cannot stat data.mdb: \(String(cString: strerror(errno)))")
            }
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
                    throw SnapshotRewritten(transactionID: transactionID)
                }
                chosen = match
            } else {
                // mdb_env_pick_meta: the higher transaction, the first page on a tie.
                chosen = second.transactionID > first.transactionID ? second : first
            }
            guard chosen.lastPage >= F.metaPageCount - 1, chosen.lastPage < UInt64(fileSize / pageSize) else {
                throw Damage(
                    "the meta page's last page \(chosen.lastPage) is outside data.mdb (\(fileSize / pageSize) pages)")
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
            try walkTree(meta.free, name: "free pages", integerKeys: true, minimumBranchKeys: 1) {
                walk, key, flags, value in
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
                    strangers.append(
                        flags & F.subData != 0
                            ? "a database named \(name.debugDescription)" : "a plain record \(name.debugDescription)")
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
    }
}
