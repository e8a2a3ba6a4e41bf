#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Memory for large tables read at random (the policies' nodes, W-TinyLFU's sketch, the
/// simulator's trace arrays), backed by transparent huge pages where Linux offers them on
/// request.
///
/// A table of a few MiB read at random spans more 4 KiB pages than the TLB maps: most reads, and
/// the prefetches meant to hide them, wait on a page walk first. In 2 MiB pages the same table
/// is a handful of entries. The advice is a hint: where the system ignores it (THP set to
/// `never`, other systems) the memory is ordinary memory.
package enum HugePages {
    /// A huge page on x86-64 and on most arm64 Linux kernels.
    package static let size = 2 << 20

    /// Below this many bytes memory is left alone: it fits in a few huge pages' worth of small
    /// ones, and the advice would only split the allocator's mappings.
    package static let adviceThreshold = size

    /// `byteCount` uninitialized bytes aligned to `alignment`, or to a huge page and advised for
    /// huge pages when there are at least ``adviceThreshold`` of them. Free with `deallocate()`.
    package static func allocate(byteCount: Int, alignment: Int) -> UnsafeMutableRawPointer {
        guard byteCount >= adviceThreshold else {
            return UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: alignment)
        }
        let memory = UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: max(alignment, size))
        advise(UnsafeMutableRawBufferPointer(start: memory, count: byteCount))
        return memory
    }

    /// Asks for huge pages for the whole pages inside `memory`, before its first write (a page
    /// already faulted in stays small until the kernel's background scan). Does nothing below
    /// ``adviceThreshold``.
    package static func advise(_ memory: UnsafeMutableRawBufferPointer) {
        #if canImport(Glibc) || canImport(Musl)
        guard memory.count >= adviceThreshold, let base = memory.baseAddress else { return }
        // madvise takes whole pages: the ones inside the buffer.
        let pageSize = 4096
        let start = (Int(bitPattern: base) + pageSize - 1) & ~(pageSize - 1)
        let end = (Int(bitPattern: base) + memory.count) & ~(pageSize - 1)
        guard end > start, let address = UnsafeMutableRawPointer(bitPattern: start) else { return }
        // A refusal (EINVAL where THP is compiled out) leaves ordinary pages: nothing to report.
        _ = madvise(address, end - start, MADV_HUGEPAGE)
        #endif
    }
}
