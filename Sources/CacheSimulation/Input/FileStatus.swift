#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What `stat(2)` says of a trace file that matters to reading it: a binary copy describes its
/// source while the size and modification time are unchanged, and only a regular file can be read
/// twice (a pipe or device yields its bytes once, and has no size or time that says what it will
/// yield).
struct FileStatus: Equatable {
    var size: UInt64
    /// Nanoseconds since the epoch.
    var modified: UInt64
    var isRegularFile: Bool
    var isDirectory: Bool

    /// The status of the file at `path` (symbolic links followed), or nil when it cannot be read.
    init?(path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        #if canImport(Darwin)
        modified = UInt64(status.st_mtimespec.tv_sec) &* 1_000_000_000 &+ UInt64(status.st_mtimespec.tv_nsec)
        #else
        modified = UInt64(status.st_mtim.tv_sec) &* 1_000_000_000 &+ UInt64(status.st_mtim.tv_nsec)
        #endif
        size = UInt64(status.st_size)
        isRegularFile = status.st_mode & S_IFMT == S_IFREG
        isDirectory = status.st_mode & S_IFMT == S_IFDIR
    }
}
