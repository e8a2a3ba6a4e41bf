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
        /// Also every entry record, given with its key to this check (decode and verify it like a
        /// lookup would).
        case records((_ key: UnsafeRawBufferPointer, _ record: UnsafeRawBufferPointer) -> RecordVerdict)
    }

    /// What a ``Scope/records(_:)`` check found of one record.
    enum RecordVerdict {
        case sound
        case damaged
        /// In a format version this code does not read: a newer TierCache's, not damage.
        case unknownFormat
    }

    /// What the walk found.
    struct Report {
        /// The first structural damage, `nil` when the store is sound.
        var damage: String?
        /// Set when the file is a well-formed LMDB environment that TierCache did not write.
        var foreign: String?
        /// Set when the file could not be read to check it (it was not found damaged).
        var unreadable: String?
        /// Set (with ``unreadable``) when the snapshot to walk was no longer on either meta page:
        /// two commits rewrote both after the snapshot began. Checking again finds a newer one.
        var snapshotRewritten = false
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
        /// With ``Scope/records``: records in a format version this code does not read.
        var unknownFormatRecords = 0
        var bytesRead = 0
    }

    /// The names of TierCache's databases (see ``LMDBEnvironment``).
    static let databaseNames: Set<String> = [
        "tiercache.meta", "tiercache.entries", "tiercache.ticks", "tiercache.recency",
    ]

    struct Damage: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    struct Foreign: Error {
        let message: String
    }

    /// The file could not be read at all (not damage: nothing was learnt about its contents).
    struct Unreadable: Error {
        let message: String
    }

    /// The snapshot asked for is on neither meta page any more (not damage: writers moved on).
    struct SnapshotRewritten: Error {
        let transactionID: UInt64
        var message: String { "two commits rewrote the meta pages before transaction \(transactionID)'s was read" }
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
        // Not damage: a file that cannot be opened now (EMFILE, EACCES) says nothing of what it
        // holds, and must not be reset.
        guard fd >= 0 else {
            report.unreadable = "cannot open \(path): \(String(cString: strerror(errno)))"
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
        } catch let rewritten as SnapshotRewritten {
            report.unreadable = rewritten.message
            report.snapshotRewritten = true
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
        report.unknownFormatRecords = walk.unknownFormatRecords
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
}
