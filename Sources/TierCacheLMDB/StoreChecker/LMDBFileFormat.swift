/// The parts of LMDB's on-disk format (liblmdb 0.9.x, 64-bit builds, `MDB_DATA_VERSION` 1) that the
/// store checker reads, with the offsets taken from `mdb.c`'s `MDB_page`, `MDB_node`, `MDB_db`
/// and `MDB_meta`.
///
/// LMDB trusts its file: it has no page checksums, and a damaged page number or node offset makes
/// it read outside the map (`SIGSEGV`/`SIGBUS`) or trip an internal assertion (`SIGABRT`). The
/// checker reads the file itself and bounds-checks every field LMDB would follow, so it
/// can report damage that would crash LMDB.
enum LMDBFileFormat {
    static let magic: UInt32 = 0xBEEF_C0DE
    static let dataVersion: UInt32 = 1
    /// `PAGEHDRSZ`: page number (8), pad (2), flags (2), lower and upper bounds (2 + 2).
    static let pageHeaderSize = 16
    /// `NODESIZE`: data size or child page (2 + 2), flags (2), key size (2).
    static let nodeHeaderSize = 8
    /// `P_INVALID`, the root of an empty database.
    static let invalidPage = UInt64.max
    /// Pages 0 and 1 are the two meta pages.
    static let metaPageCount: UInt64 = 2
    /// `CURSOR_STACK`: LMDB cannot descend a deeper tree.
    static let maximumDepth = 32
    /// The page sizes LMDB can write (`MIN_PAGESIZE`...`MAX_PAGESIZE`, a power of two).
    static let pageSizes = 512...65_536
    /// Size of an `MDB_db` record (a named database's root in the main database).
    static let databaseRecordSize = 48

    // Page flags (`mp_flags`).
    static let branchPage: UInt16 = 0x01
    static let leafPage: UInt16 = 0x02
    static let overflowPage: UInt16 = 0x04
    static let metaPage: UInt16 = 0x08

    // Node flags (`mn_flags`, leaf nodes only).
    static let bigData: UInt16 = 0x01
    static let subData: UInt16 = 0x02
    static let dupData: UInt16 = 0x04

    // Database flags (`md_flags`): the free-page database's keys are native integers.
    static let integerKey: UInt16 = 0x08

    /// Offsets of `MDB_meta` fields inside a meta page (after the page header).
    enum Meta {
        static let magic = 16
        static let version = 20
        static let mapSize = 32
        static let freeDatabase = 40
        static let mainDatabase = 88
        static let lastPage = 136
        static let transactionID = 144
        static let end = 152
    }

    /// `OVPAGES`: pages an overflow value of `size` bytes takes.
    static func overflowPages(forValueSize size: Int, pageSize: Int) -> Int {
        (pageHeaderSize - 1 + size) / pageSize + 1
    }
}

/// An `MDB_db` record: one B-tree's root and counts.
struct LMDBDatabaseRecord: Equatable {
    var pageSizeOrPad: UInt32
    var flags: UInt16
    var depth: UInt16
    var branchPages: UInt64
    var leafPages: UInt64
    var overflowPages: UInt64
    var entries: UInt64
    var root: UInt64

    /// Reads the record at `offset` of `bytes`; `nil` when it does not fit.
    init?(_ bytes: [UInt8], at offset: Int) {
        guard offset >= 0, offset + LMDBFileFormat.databaseRecordSize <= bytes.count else { return nil }
        pageSizeOrPad = bytes.loadLittleEndian(UInt32.self, at: offset)
        flags = bytes.loadLittleEndian(UInt16.self, at: offset + 4)
        depth = bytes.loadLittleEndian(UInt16.self, at: offset + 6)
        branchPages = bytes.loadLittleEndian(UInt64.self, at: offset + 8)
        leafPages = bytes.loadLittleEndian(UInt64.self, at: offset + 16)
        overflowPages = bytes.loadLittleEndian(UInt64.self, at: offset + 24)
        entries = bytes.loadLittleEndian(UInt64.self, at: offset + 32)
        root = bytes.loadLittleEndian(UInt64.self, at: offset + 40)
    }
}

/// One of the two meta pages.
struct LMDBMetaPage {
    var pageSize: Int
    var mapSize: UInt64
    var free: LMDBDatabaseRecord
    var main: LMDBDatabaseRecord
    var lastPage: UInt64
    var transactionID: UInt64
}

extension [UInt8] {
    /// Reads a little-endian integer at `offset`; the caller has checked the bounds.
    @inline(__always)
    func loadLittleEndian<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        var value: T = 0
        for index in 0..<MemoryLayout<T>.size {
            value |= T(truncatingIfNeeded: self[offset + index]) << (8 * index)
        }
        return value
    }
}
