import Foundation
import TierCacheCompression

/// The B-tree walk: pages, nodes, overflow values, free lists and entry records.
extension LMDBStoreChecker.Walk {
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
    typealias LeafVisitor = (inout LMDBStoreChecker.Walk, UnsafeRawBufferPointer, UInt16, Value) throws -> Void

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
            func u16(_ offset: Int) -> Int {
                Int(UInt16(littleEndian: page.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
            }
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
                    guard nodeFlags & F.dupData == 0 else {
                        throw Damage("node \(index) of page \(number) of \(name) is a duplicate set")
                    }
                    end += nodeFlags & F.bigData != 0 ? 8 : u16(offset) | u16(offset + 2) << 16
                }
                end = (end + 1) & ~1
                guard end <= pageSize else {
                    throw Damage("node \(index) of page \(number) of \(name) runs past the page")
                }
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
            guard expected == pageSize else {
                throw Damage("the nodes of page \(number) of \(name) end at \(expected), not the page's end")
            }

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

        func u16(_ offset: Int) -> Int {
            Int(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
        }
        func slice(_ start: Int, _ end: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: bytes[start..<end])
        }
        if !isLeaf {
            counts.branch += 1
            for index in nodes.indices {
                let offset = nodes[index].offset
                let child = UInt64(u16(offset)) | UInt64(u16(offset + 2)) << 16 | UInt64(u16(offset + 4)) << 32
                try walkPage(
                    child, level: level + 1, depth: depth,
                    lower: index == 0 ? lower : Array(slice(nodes[index].keyStart, nodes[index].keyEnd)),
                    upper: index + 1 < nodes.count
                        ? Array(slice(nodes[index + 1].keyStart, nodes[index + 1].keyEnd)) : upper,
                    name: name, integerKeys: integerKeys, minimumBranchKeys: minimumBranchKeys, counts: &counts,
                    leaf: leaf)
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
                try leaf?(
                    &self, slice(node.keyStart, node.keyEnd), nodeFlags, .inline(slice(node.keyEnd, node.keyEnd + size))
                )
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
        guard case .records(let verdict) = scope else { return }
        let bytes = try valueBytes(value)
        switch bytes.withUnsafeBytes({ verdict(key, $0) }) {
        case .sound: break
        case .unknownFormat: unknownFormatRecords += 1
        case .damaged:
            damagedRecords += 1
            if damagedRecordKeys.count < 10 { damagedRecordKeys.append(String(decoding: key, as: UTF8.self)) }
        }
    }
}
