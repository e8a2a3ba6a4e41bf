import Foundation
import Testing

@testable import TierCacheEviction

#if canImport(Glibc)
import Glibc
#endif

/// The large tables' memory: aligned as asked, usable, and advised for huge pages where Linux
/// offers them.
@Suite struct HugePagesTests {
    @Test("Small memory keeps the alignment asked for")
    func smallMemory() {
        let memory = HugePages.allocate(byteCount: 1_000, alignment: 64)
        defer { memory.deallocate() }
        #expect(Int(bitPattern: memory) % 64 == 0)
        memory.initializeMemory(as: UInt8.self, repeating: 7, count: 1_000)
        #expect(memory.load(fromByteOffset: 999, as: UInt8.self) == 7)
    }

    @Test("Large memory is aligned to a huge page, usable to its last byte, and advised")
    func largeMemory() {
        let byteCount = 3 * HugePages.size + 8
        let memory = HugePages.allocate(byteCount: byteCount, alignment: 64)
        defer { memory.deallocate() }
        #expect(Int(bitPattern: memory) % HugePages.size == 0)
        let words = memory.bindMemory(to: UInt64.self, capacity: byteCount / 8)
        words.initialize(repeating: 0, count: byteCount / 8)
        words[byteCount / 8 - 1] = 42
        #expect(words[byteCount / 8 - 1] == 42)
        #if os(Linux)
        // A kernel built with transparent huge pages marks an advised mapping `hg`, whatever its
        // current mode; without them the advice is refused and nothing changes.
        if FileManager.default.fileExists(atPath: "/sys/kernel/mm/transparent_hugepage/enabled") {
            #expect(Self.isAdvised(memory))
        }
        #endif
    }

    #if os(Linux)
    @Test("Advice on a buffer below the threshold, or empty, changes nothing")
    func adviceBelowThreshold() throws {
        // A mapping of its own (malloc's memory may lie where an advised table lay before).
        let pages = 4 * 4_096
        let mapped = mmap(nil, pages, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        let base = try #require(mapped == MAP_FAILED ? nil : mapped)
        defer { munmap(base, pages) }
        HugePages.advise(UnsafeMutableRawBufferPointer(start: base, count: pages))
        HugePages.advise(UnsafeMutableRawBufferPointer(start: nil, count: 0))
        #expect(!Self.isAdvised(base))
    }
    #endif

    /// Whether the mapping holding `address` is advised for huge pages (`hg` in its `VmFlags`,
    /// in `/proc/self/smaps`); false where there is no such file.
    private static func isAdvised(_ address: UnsafeRawPointer) -> Bool {
        // Read to the end: `/proc` files report a size of 0, and a read of that size stops early.
        guard let file = FileHandle(forReadingAtPath: "/proc/self/smaps"), let data = try? file.readToEnd() else {
            return false
        }
        let smaps = String(decoding: data, as: UTF8.self)
        let target = UInt(bitPattern: address)
        var inMapping = false
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let range = fields.first, range.contains("-"), !range.hasSuffix(":") {
                let bounds = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
                inMapping = bounds.count == 2 && bounds[0] <= target && target < bounds[1]
            } else if inMapping, line.hasPrefix("VmFlags:") {
                return fields.contains("hg")
            }
        }
        return false
    }
}
